"""`/schema.graphql`: the schema's SDL at a stable address, for partners' code generators."""

from functools import cache

from starlette.requests import Request
from starlette.responses import Response

from schema import digest, published_sdl
from server.http_caching import conditional, entity_tag

SDL_MEDIA_TYPE = "text/plain; charset=utf-8"


@cache
def _sdl() -> bytes:
    return published_sdl().encode()


async def schema_file(request: Request) -> Response:
    sdl = _sdl()
    headers = {
        "ETag": entity_tag(digest(sdl)),
        "Cache-Control": "public, max-age=300, must-revalidate",
        "Vary": "Accept-Encoding",
    }
    return conditional(request, Response(sdl, headers=headers, media_type=SDL_MEDIA_TYPE))
