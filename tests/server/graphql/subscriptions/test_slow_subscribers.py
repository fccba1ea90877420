"""A subscriber that stops reading is let go: through a real server on loopback, a client
that subscribes and then reads nothing, while large changes are made, has its subscription
closed once a message waits past the send deadline: the slot is freed (the key's only one is
taken again), the server counts it, and the client, reading again, is told (WebSocket: close
4408 with the reason; SSE: the stream ends).
"""

import asyncio
import contextlib
import json
import re
import socket
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import h11
import httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import WebSocketRoute
from websockets import Subprotocol
from websockets.client import ClientProtocol
from websockets.frames import Close
from websockets.http11 import Response
from websockets.uri import parse_uri

from server.api_keys import create_key
from server.graphql.view import AlmanacGraphQL
from server.settings import Settings
from store import Store, encode_change_cursor
from tests.server.graphql.subscriptions.test_subscriptions import (
    events,
    newest_cursor,
    serving,
    websocket,
)
from tests.store.test_changes import changed

GENERAL = "code-interpreter-benchmark-general"
DEADLINE = 60.0  # seconds: generous, for a loaded machine; no test waits it out when it works
BIG = """subscription($after: String) {
  changes(after: $after) { sequence subject { ... on Benchmark { note } } }
}"""
NOTE = "A long note. " * 4_000  # some 50 KB in each event
CHANGES = 40  # some 2 MB of events: far more than the buffers hold (a few hundred KB at most)
BUFFER = 4096  # the client's receive buffer and the server's send buffer (the kernel doubles it)
SLOW = [
    Settings(
        max_subscriptions_per_key=1,
        subscription_send_timeout_seconds=1.0,
        key_bucket_capacity=100_000_000,
        key_restore_rate=1_000_000.0,
    )
]


@pytest.fixture
async def served(app: Starlette) -> AsyncIterator[str]:
    # Small kernel buffers, so they fill fast; no keep-alive pings of uvicorn's own, which
    # would close the connection (1011) in their own time.
    async with serving(app, send_buffer=BUFFER, ws_ping_interval=None) as address:
        yield address


@pytest.fixture
async def http(served: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=f"http://{served}", timeout=DEADLINE) as client:
        yield client


@contextlib.asynccontextmanager
async def stalled_socket(address: str) -> AsyncIterator[socket.socket]:
    """A connection to the server whose receive buffer is small, and that nothing reads
    unless the test asks (closed at the end, whatever happened: the server's shutdown waits
    for it)."""
    host, port = address.split(":")
    with socket.socket() as connection:
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, BUFFER)
        connection.setblocking(False)
        await asyncio.get_running_loop().sock_connect(connection, (host, int(port)))
        yield connection


class StalledWebSocket:
    """A graphql-transport-ws client (websockets' own protocol, without I/O) over a socket the
    test reads only when it says so."""

    def __init__(self, connection: socket.socket, address: str) -> None:
        self.connection = connection
        self.protocol = ClientProtocol(
            parse_uri(f"ws://{address}/graphql"),
            subprotocols=[Subprotocol("graphql-transport-ws")],
            max_size=None,
        )
        self.loop = asyncio.get_running_loop()

    async def flush(self) -> None:
        await self.loop.sock_sendall(self.connection, b"".join(self.protocol.data_to_send()))

    async def read(self) -> list[Any]:
        """What the next bytes read bring."""
        data = await asyncio.wait_for(self.loop.sock_recv(self.connection, 65536), DEADLINE)
        assert data, "the connection ended without a close frame"
        self.protocol.receive_data(data)
        return self.protocol.events_received()

    async def open(self, key: str) -> None:
        self.protocol.send_request(self.protocol.connect())
        await self.flush()
        while not any(isinstance(event, Response) for event in await self.read()):
            pass
        assert self.protocol.handshake_exc is None
        init = {"type": "connection_init", "payload": {"Authorization": f"Bearer {key}"}}
        await self.send(init)
        while not any(
            json.loads(frame.data) == {"type": "connection_ack"} for frame in await self.read()
        ):
            pass

    async def send(self, message: dict[str, Any]) -> None:
        self.protocol.send_text(json.dumps(message).encode())
        await self.flush()

    async def close_received(self) -> Close:
        """Read everything sent, to the close."""
        while self.protocol.close_rcvd is None:
            await self.read()
        return self.protocol.close_rcvd


def view_of(app: Starlette) -> AlmanacGraphQL:
    [route] = [route for route in app.routes if isinstance(route, WebSocketRoute)]
    view = route.endpoint
    assert isinstance(view, AlmanacGraphQL)
    return view


async def until(condition: Callable[[], Any], what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.05)


async def too_slow(http: httpx.AsyncClient, transport: str) -> float:
    """The server's count of subscriptions closed for their client not reading (/metrics)."""
    metrics = (await http.get("/metrics")).text
    pattern = rf'^almanac_subscriptions_too_slow_total\{{transport="{transport}"\}} (\S+)$'
    found = re.search(pattern, metrics, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


async def change_a_lot(store: Store) -> str:
    """Many large changes; the cursor before the last one."""
    for number in range(CHANGES):
        await changed(store, GENERAL, note=f"{number}: {NOTE}")
    _, newest = await store.change_bounds()
    return encode_change_cursor(newest - 1)


@pytest.mark.parametrize("settings", SLOW)
async def test_a_websocket_subscriber_that_stops_reading_is_closed_and_its_slot_freed(
    app: Starlette, store: Store, served: str, http: httpx.AsyncClient
) -> None:
    view = view_of(app)
    key = await create_key(store, "reader", "read")
    closed_before = await too_slow(http, "websocket")
    after = await newest_cursor(http)
    async with stalled_socket(served) as connection:
        stalled = StalledWebSocket(connection, served)
        await stalled.open(key)
        subscribe = {"query": BIG, "variables": {"after": after}}
        await stalled.send({"id": "1", "type": "subscribe", "payload": subscribe})
        await until(lambda: view.subscriptions.open["key:reader"] == 1, "never subscribed")

        last = await change_a_lot(store)  # and the client reads none of it

        await until(lambda: "key:reader" not in view.subscriptions.open, "the slot was never freed")
        assert await too_slow(http, "websocket") == closed_before + 1
        # The key's one subscription may be taken again: this one is sent the last change.
        [again] = await asyncio.wait_for(
            events(websocket(served, key), 1, BIG, after=last), DEADLINE
        )
        assert again["subject"]["note"].startswith(f"{CHANGES - 1}: ")

        close = await stalled.close_received()  # reading again, the client is told why
        assert close.code == 4408
        assert close.reason.startswith("Too slow to read")


class StalledEventStream:
    """A subscription over SSE (an HTTP client: h11, without I/O) over a socket the test reads
    only when it says so."""

    def __init__(self, connection: socket.socket, address: str) -> None:
        self.connection, self.address = connection, address
        self.protocol = h11.Connection(h11.CLIENT)
        self.loop = asyncio.get_running_loop()

    async def subscribe(self, key: str, query: str, **variables: Any) -> None:
        body = json.dumps({"query": query, "variables": variables}).encode()
        headers = [
            ("Host", self.address),
            ("Accept", "text/event-stream"),
            ("Content-Type", "application/json"),
            ("Authorization", f"Bearer {key}"),
            ("Content-Length", str(len(body))),
        ]
        request = h11.Request(method="POST", target="/graphql", headers=headers)
        sent = self.protocol.send(request) + self.protocol.send(h11.Data(data=body))
        sent += self.protocol.send(h11.EndOfMessage())
        await self.loop.sock_sendall(self.connection, sent)

    async def ended(self) -> tuple[int, bytes]:
        """Read everything sent, to the response's end: its status and body."""
        status, body = 0, b""
        while True:
            event = self.protocol.next_event()
            if event is h11.NEED_DATA:
                read = self.loop.sock_recv(self.connection, 65536)
                self.protocol.receive_data(await asyncio.wait_for(read, DEADLINE))
            elif isinstance(event, h11.Response):
                status = event.status_code
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                return status, body
            else:
                raise AssertionError(f"the stream did not end: {event!r}")


@pytest.mark.parametrize("settings", SLOW)
async def test_an_sse_subscriber_that_stops_reading_is_let_go_and_its_slot_freed(
    app: Starlette, store: Store, served: str, http: httpx.AsyncClient
) -> None:
    view = view_of(app)
    key = await create_key(store, "reader", "read")
    closed_before = await too_slow(http, "sse")
    async with stalled_socket(served) as connection:
        stalled = StalledEventStream(connection, served)
        await stalled.subscribe(key, BIG, after=await newest_cursor(http))
        await until(lambda: view.subscriptions.open["key:reader"] == 1, "never subscribed")

        last = await change_a_lot(store)  # and the client reads none of it

        await until(lambda: "key:reader" not in view.subscriptions.open, "the slot was never freed")
        assert await too_slow(http, "sse") == closed_before + 1
        [again] = await asyncio.wait_for(
            events(websocket(served, key), 1, BIG, after=last), DEADLINE
        )
        assert again["subject"]["note"].startswith(f"{CHANGES - 1}: ")

        status, body = await stalled.ended()  # reading again, the client finds the stream ended
        assert status == 200
        sent = [json.loads(line[6:]) for line in body.decode().splitlines() if line[:6] == "data: "]
        assert 0 < len(sent) < CHANGES  # what the buffers held, then nothing more
        assert "event: complete" not in body.decode()
