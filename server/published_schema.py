"""`/schema.graphql`: the schema's SDL at a stable address, for partners' code generators."""

from functools import cache

from starlette.requests import Request
from starlette.responses import Response

from schema.stability import published_sdl
from server.http_caching import content_coding, encoded, entity_tag, matches

SDL_MEDIA_TYPE = "text/plain; charset=utf-8"


@cache
def _sdl() -> bytes:
    return published_sdl().encode()


async def published_schema(request: Request) -> Response:
    sdl = _sdl()
    coding = content_coding(request.headers.get("accept-encoding"), len(sdl))
    headers = {
        "ETag": entity_tag(sdl, coding),
        "Cache-Control": "public, max-age=300, must-revalidate",
        "Vary": "Accept-Encoding",
    }
    if matches(request.headers.get("if-none-match"), headers["ETag"]):
        return Response(status_code=304, headers=headers)
    if coding is not None:
        headers["Content-Encoding"] = coding
    return Response(encoded(sdl, coding), headers=headers, media_type=SDL_MEDIA_TYPE)
