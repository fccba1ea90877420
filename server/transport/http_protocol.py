"""Uvicorn's HTTP protocol (httptools), with what it lacks against slow and oversized clients.

Uvicorn closes a keep-alive connection left idle between requests (`timeout_keep_alive`), but a
connection that never finishes a request's head is held forever, every connection is accepted,
and header lines are unlimited in size and number. This protocol adds, per connection:

- a deadline for each request's head, from the connection (or the request's first byte): 408,
  then the connection is closed, so idle and trickling sockets are let go; each deadline is
  jittered (75-100% of the setting), so that sockets opened together are not let go together;
- a cap on the bytes and the lines of a request's head: 431;
- a cap on open connections: one over it is answered 503 at once and closed, so its socket is
  freed and the process keeps file descriptors for the clients it serves.

- a deadline for a request's body, from its head: 408, then the connection is closed (armed only
  when a read ends with the body incomplete, so most requests never pay for a timer).

Every refusal is a GraphQL-shaped JSON error, like the app's own.
"""

import asyncio
import logging
import random
import resource
from dataclasses import dataclass
from functools import cache
from http import HTTPStatus

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from api_errors import ApiError, error_document
from schema import encode_json
from server.settings import Settings

log = logging.getLogger("almanac")

# File descriptors kept for what is not a client connection: the database, Redis, logs, files.
RESERVED_DESCRIPTORS = 64
# Each head deadline falls between this share of the setting and all of it: clients that
# connected together (an attack, or a reconnecting fleet) are not all let go, and do not all come
# back, at the same moment.
EARLIEST_DEADLINE_SHARE = 0.75
# After a refusal, what the client still sends is read and dropped this long before the
# connection closes (a "lingering close", as nginx does): closing a socket with unread data
# resets it, and the client would lose the answer that says why.
LINGER_SECONDS = 2.0


@dataclass(frozen=True)
class ConnectionLimits:
    head_timeout_seconds: float
    body_timeout_seconds: float
    max_head_bytes: int
    max_header_lines: int
    max_connections: int


@cache
def connection_limits() -> ConnectionLimits:
    """The configured limits, the connection cap within this process's file descriptors."""
    settings = Settings()
    descriptors, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return ConnectionLimits(
        head_timeout_seconds=settings.header_timeout_seconds,
        body_timeout_seconds=settings.body_timeout_seconds,
        max_head_bytes=settings.max_header_bytes,
        max_header_lines=settings.max_header_lines,
        max_connections=min(settings.max_connections, descriptors - RESERVED_DESCRIPTORS),
    )


def raise_descriptor_limit(connections: int) -> None:
    """Let this process (and the workers it starts) hold `connections` sockets, if it may."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = connections + RESERVED_DESCRIPTORS
    if soft < wanted:
        ceiling = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (ceiling, hard))
        if ceiling < wanted:
            log.warning(
                "This process may open %d files; ALMANAC_MAX_CONNECTIONS is lowered to %d.",
                ceiling,
                ceiling - RESERVED_DESCRIPTORS,
            )


class OpenConnections:
    """The sockets this process holds for clients: counted here, not read from Uvicorn's own
    bookkeeping. A connection upgraded to a WebSocket leaves this protocol but keeps its socket:
    it stays counted until its transport closes, found when the count reaches the cap."""

    def __init__(self) -> None:
        self.transports: set[asyncio.BaseTransport] = set()

    def opened(self, transport: asyncio.BaseTransport, cap: int) -> int:
        """How many are open, `transport` with them."""
        self.transports.add(transport)
        if len(self.transports) > cap:
            self.transports = {held for held in self.transports if not held.is_closing()}
        return len(self.transports)

    def closed(self, transport: asyncio.BaseTransport) -> None:
        self.transports.discard(transport)


# One count a process, as Uvicorn makes a protocol a connection and hands it nothing else.
OPEN_CONNECTIONS = OpenConnections()


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    limits: ConnectionLimits

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self.limits = connection_limits()
        self.reading_head = True
        self.head_bytes = 0
        self.header_lines = 0
        self.head_deadline: asyncio.TimerHandle | None = None
        self.reading_body = False
        self.body_deadline: asyncio.TimerHandle | None = None
        self.lingering = False
        super().connection_made(transport)
        if OPEN_CONNECTIONS.opened(transport, self.limits.max_connections) > (
            self.limits.max_connections
        ):
            self.refuse(503, "The server holds as many connections as it can; retry shortly.")
            return
        self.arm_head_deadline()

    def connection_lost(self, exc: Exception | None) -> None:
        OPEN_CONNECTIONS.closed(self.transport)
        self.cancel_head_deadline()
        self.cancel_body_deadline()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self.lingering:
            return
        super().data_received(data)
        if self.transport.is_closing():
            return
        # A head still incomplete after this data: count it, as the parser holds it in memory.
        if self.reading_head:
            self.head_bytes += len(data)
            if self.head_bytes > self.limits.max_head_bytes:
                self.refuse_large_head()
        elif self.reading_body and self.body_deadline is None:
            self.body_deadline = self.loop.call_later(
                self.limits.body_timeout_seconds, self.body_too_slow
            )

    # Parser callbacks. After a refusal, the rest of what the parser was fed (the refused
    # request's end, a pipelined one) is dropped: Uvicorn's callbacks would answer it again.
    def on_message_begin(self) -> None:
        if self.lingering:
            return
        self.reading_head = True
        self.head_bytes = 0
        self.header_lines = 0
        self.arm_head_deadline()
        super().on_message_begin()

    def on_url(self, url: bytes) -> None:
        if not self.lingering:
            super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        if self.lingering:
            return
        self.header_lines += 1
        if self.header_lines <= self.limits.max_header_lines:
            super().on_header(name, value)

    def on_headers_complete(self) -> None:
        if self.lingering:
            return
        self.reading_head = False
        self.cancel_head_deadline()
        head = len(self.url) + sum(len(name) + len(value) + 4 for name, value in self.headers)
        if self.header_lines > self.limits.max_header_lines:
            self.refuse(
                431,
                f"The request has {self.header_lines} header lines; the most accepted is "
                f"{self.limits.max_header_lines}.",
            )
        elif head > self.limits.max_head_bytes:
            self.refuse_large_head()
        else:
            self.reading_body = True
            super().on_headers_complete()

    def on_body(self, body: bytes) -> None:
        if not self.lingering:
            super().on_body(body)

    def on_message_complete(self) -> None:
        if self.lingering:
            return
        self.reading_body = False
        self.cancel_body_deadline()
        super().on_message_complete()

    # Deadlines and refusals
    def arm_head_deadline(self) -> None:
        if self.head_deadline is None:
            share = random.uniform(EARLIEST_DEADLINE_SHARE, 1.0)
            self.head_deadline = self.loop.call_later(
                share * self.limits.head_timeout_seconds, self.head_too_slow
            )

    def cancel_head_deadline(self) -> None:
        if self.head_deadline is not None:
            self.head_deadline.cancel()
            self.head_deadline = None

    def head_too_slow(self) -> None:
        self.head_deadline = None
        if self.responding:
            self.arm_head_deadline()  # A pipelined head waits for the response before it.
            return
        seconds = self.limits.head_timeout_seconds
        self.refuse(408, f"The request's head did not arrive within {seconds:g} seconds.")

    def cancel_body_deadline(self) -> None:
        if self.body_deadline is not None:
            self.body_deadline.cancel()
            self.body_deadline = None

    def body_too_slow(self) -> None:
        """The body did not arrive in time: refused, and the connection closed after its
        lingering close; the app, waiting for the body, is told the client left as Uvicorn
        tells it of any connection lost."""
        self.body_deadline = None
        if self.cycle is not None and not self.cycle.response_started:
            seconds = self.limits.body_timeout_seconds
            self.reading_body = False
            self.refuse(408, f"The request's body did not arrive within {seconds:g} seconds.")

    def refuse_large_head(self) -> None:
        self.refuse(
            431,
            f"The request's head is larger than {self.limits.max_head_bytes} bytes, "
            "the most accepted.",
        )

    @property
    def responding(self) -> bool:
        """Whether the app is answering a request: only it may write to the client then."""
        return (
            self.cycle is not None
            and self.cycle.response_started
            and not self.cycle.response_complete
        )

    def refuse(self, status: int, message: str) -> None:
        """Answer with a GraphQL-shaped error and close the connection."""
        self.reading_head = False
        self.cancel_head_deadline()
        self.cancel_body_deadline()
        if self.transport.is_closing() or self.lingering:
            return
        if self.responding or not self.transport.can_write_eof():
            self.transport.close()
            return
        self.transport.write(refusal_bytes(status, message))
        self.transport.write_eof()
        self.lingering = True
        self.loop.call_later(LINGER_SECONDS, self.transport.close)


def refusal_bytes(status: int, message: str) -> bytes:
    body = encode_json(error_document([ApiError(message, status=status).as_graphql_error()]))
    head = (
        f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\n"
        "content-type: application/json\r\n"
        f"content-length: {len(body)}\r\n"
        "connection: close\r\n\r\n"
    )
    return head.encode() + body
