"""A subscriber too slow to read is let go, not buffered for: each message to it is sent
within a deadline (`ALMANAC_SUBSCRIPTION_SEND_TIMEOUT_SECONDS`).

A send waits while the connection's buffers are full (uvicorn's flow control: the transport's
and the kernel's, some hundred KB), that is while the client does not read. One that waits
past the deadline ends the subscription at once: its slot is freed and nothing more is read
for it. It is counted (`almanac_subscriptions_too_slow_total`) and logged, and the client is
told once it reads again: on a WebSocket, the close (4408, with the reason); over SSE, the
stream's end. Until then the connection itself stays uvicorn's, waiting to flush (ASGI has no
way to drop it), and goes when the client reads or leaves.
"""

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, Callable

from prometheus_client import Counter
from starlette.responses import StreamingResponse
from starlette.types import Message, Receive, Scope, Send

log = logging.getLogger("almanac.subscriptions")

CLOSE_CODE = 4408
"""The WebSocket close code (graphql-transport-ws' code for a timeout; its clients retry)."""

TOO_SLOW = Counter(
    "almanac_subscriptions_too_slow",
    "Subscriptions closed because their client stopped reading (a message waited past "
    "ALMANAC_SUBSCRIPTION_SEND_TIMEOUT_SECONDS to be sent), by transport: websocket or sse.",
    ["transport"],
)


class TooSlowToRead(Exception):
    """A message to a subscriber waited past the deadline to be sent. (Not an OSError, as a
    TimeoutError is: Starlette takes those for a client gone.)"""


def close_reason(seconds: float) -> str:
    """Why the connection was closed, as its client is told (at most 123 bytes)."""
    return f"Too slow to read: a message waited {seconds:g} s to be sent. Resume from your cursor."


def report_too_slow(transport: str, client: str, seconds: float) -> None:
    TOO_SLOW.labels(transport).inc()
    log.warning(
        "A subscriber over %s (%s) stopped reading: a message waited %g s to be sent. Its "
        "subscription is closed and its slot freed.",
        transport,
        client,
        seconds,
    )


def within(send: Send, seconds: float) -> Send:
    """`send`, each message sent within `seconds` or TooSlowToRead."""

    async def bounded(message: Message) -> None:
        try:
            async with asyncio.timeout(seconds):
                await send(message)
        except TimeoutError:
            raise TooSlowToRead from None

    return bounded


async def stream_within(
    response: StreamingResponse,
    scope: Scope,
    receive: Receive,
    send: Send,
    seconds: float,
    too_slow: Callable[[], None],
) -> None:
    """Send `response` (a subscription's events over SSE), each message within `seconds`. If
    one waits longer, `too_slow` is told, its events end at once (their source closed, so the
    subscription's slot is freed), and the response ends once the client reads again (if it
    left, there is no one to tell)."""
    try:
        await response(scope, receive, within(send, seconds))
        return
    except TooSlowToRead:
        too_slow()  # before the slot is freed, so whoever finds it free finds the report too
        if isinstance(response.body_iterator, AsyncGenerator):
            await response.body_iterator.aclose()
    with contextlib.suppress(OSError):
        await send({"type": "http.response.body", "body": b"", "more_body": False})
