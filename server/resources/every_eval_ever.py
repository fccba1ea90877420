"""`/export.eee.jsonl`: the whole almanac as Every Eval Ever 0.3.0 records (interchange), one a
line, streamed and charged as `/export.ndjson` is."""

from collections.abc import AsyncIterator, Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response

from interchange import eee_lines
from server.resources.downloads import Downloads
from store import Store

FILENAME = "almanac.eee.jsonl"


def eee_export(downloads: Downloads) -> Callable[[Request], Awaitable[Response]]:
    """The endpoint, sharing the downloads' export slots and charges."""

    async def lines(store: Store) -> AsyncIterator[bytes]:
        async for line in eee_lines(store):
            yield line.encode()

    async def endpoint(request: Request) -> Response:
        return await downloads.streamed_export(request, lines, FILENAME, "eee")

    return endpoint
