"""Read-your-writes: the change an operation's answer must reflect at least, and the wait for it.

A client that made a change, or learnt of one (a mutation's `extensions.changeCursor` or its
`Almanac-Change-Cursor` header, a change's `cursor` in the feed, a subscription's event or a
webhook's delivery), sends that cursor as `Almanac-Min-Change` (or an operation's
`extensions.minChange`). Before the operation is answered, whichever process answers it has
applied every change up to that one (its own changes as it makes them, the others' as its
change-log follower reads them, told to read the log at once: Store.change_applied), waiting
within the request's deadline. A key gets the changes it made through this process without
sending anything (`OwnChanges`). A cursor of a change not yet logged could never be reached:
it is refused at once, not waited on.

GraphQL waits at admission, per operation (server.graphql.admission); the other GET resources
(downloads, the exports, the feeds: answers kept until what they read changes, as GraphQL's
are) wait once the caller is known (`request_reached`), on the header alone.
"""

import asyncio
import time
from collections import OrderedDict
from collections.abc import Mapping

from api_errors import ApiError, ErrorCode, shown
from server.observability import MIN_CHANGE_WAIT_SECONDS, MIN_CHANGE_WAITS
from store import Store, decode_change_cursor
from webhooks import CHANGE_CURSOR_HEADER as CHANGE_CURSOR_HEADER  # as a delivery names it

HEADER = "almanac-min-change"
"""The request header naming the change an answer must reflect at least (a change cursor)."""
EXTENSION = "minChange"
"""The same, for one operation: in the GraphQL request's `extensions`."""
CHANGE_CURSOR_EXTENSION = "changeCursor"
"""The same, for one operation: in its answer's `extensions`."""
OWN_KEYS = 10_000
"""The most keys whose last change a process remembers (the least recently writing forgotten)."""

APPLIED = MIN_CHANGE_WAITS.labels("applied")
WAITED = MIN_CHANGE_WAITS.labels("waited")
TIMED_OUT = MIN_CHANGE_WAITS.labels("timed_out")
REFUSED = MIN_CHANGE_WAITS.labels("refused")


class ChangeNotReached(ApiError):
    """The minimum change was not applied here within the request's deadline."""


class OwnChanges:
    """The last change each API key made through this process, for at most `most` keys."""

    def __init__(self, most: int = OWN_KEYS) -> None:
        self.most = most
        self._last: OrderedDict[str, int] = OrderedDict()

    def note(self, key: str, sequence: int) -> None:
        self._last[key] = max(self._last.pop(key, 0), sequence)
        if len(self._last) > self.most:
            self._last.popitem(last=False)

    def of(self, key: str) -> int | None:
        return self._last.get(key)


def header_minimum(headers: Mapping[str, str]) -> int | None:
    """The change a request's `Almanac-Min-Change` names (None: none); a value that is not a
    change cursor of this API refuses the request."""
    return _decoded(headers.get(HEADER), "the Almanac-Min-Change header")


def operation_minimum(extensions: Mapping[str, object] | None) -> int | None:
    """The change an operation's `extensions.minChange` names (None: none), or its refusal."""
    return _decoded((extensions or {}).get(EXTENSION), f"extensions.{EXTENSION}")


def _decoded(value: object, where: str) -> int | None:
    if value is None:
        return None
    sequence = decode_change_cursor(value) if isinstance(value, str) else None
    if sequence is None:
        raise ApiError(
            f"{where} is not a change cursor this API gave out: {shown(value)}. Send a "
            "mutation's changeCursor, or a change's cursor from the feed, a subscription or a "
            "webhook.",
            code=ErrorCode.BAD_REQUEST,
        )
    return sequence


async def reached(store: Store, sequence: int, deadline: float | None) -> None:
    """Return once this process has applied the change numbered `sequence` (at once if it
    has), by `deadline` (the event loop's clock; None: unbounded) or `ChangeNotReached`; a
    change beyond the log's newest is refused at once (CHANGE_NOT_FOUND)."""
    version = store.version
    if version.applied_through >= sequence:
        APPLIED.inc()
        return
    _, newest = await store.change_bounds()
    if sequence > newest:
        REFUSED.inc()
        raise ApiError(
            f"The change {sequence} named by the minimum change asked for is not in this "
            f"almanac's change log (its newest is {newest}): send a cursor this API gave out.",
            code=ErrorCode.CHANGE_NOT_FOUND,
        )
    began = time.monotonic()
    try:
        async with asyncio.timeout_at(deadline):
            await store.change_applied(sequence)
    except TimeoutError:
        MIN_CHANGE_WAIT_SECONDS.observe(time.monotonic() - began)
        TIMED_OUT.inc()
        raise ChangeNotReached(
            f"This server had not applied the change asked for ({sequence}; applied through "
            f"{version.applied_through}) within the request's deadline: try again.",
            code=ErrorCode.CHANGE_NOT_REACHED,
            status=504,
        ) from None
    MIN_CHANGE_WAIT_SECONDS.observe(time.monotonic() - began)
    WAITED.inc()


async def request_reached(store: Store, headers: Mapping[str, str], seconds: float) -> None:
    """A request that is not GraphQL: the change its `Almanac-Min-Change` names applied here
    within `seconds` (the request's timeout), or why not (`ApiError`)."""
    if sequence := header_minimum(headers):
        await reached(store, sequence, asyncio.get_running_loop().time() + seconds)
