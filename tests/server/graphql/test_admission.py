"""The one admission path (server.graphql.admission) on the streaming transports, through a real server:
a WebSocket message held to the body limit (by the app, and by `almanac serve`'s Uvicorn, a
16 MB compressed one refused without the memory or the stall it used to cost), trusted
documents on WebSockets and SSE as over HTTP, a refusal paying the minimum, a revoked key's
subscriptions ended, idle and malformed sockets closed with the protocol's codes and no
traceback.
"""

import asyncio
import contextlib
import hashlib
import json
import logging
import threading
import time
import zlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets
from graphql import GraphQLError
from prometheus_client import REGISTRY
from starlette.routing import WebSocketRoute
from websockets import Subprotocol
from websockets.asyncio.client import ClientConnection

from server.api_keys import create_key, revoke_key
from server.app import AlmanacApp, create_app
from server.charges import MINIMUM
from server.graphql.view import AlmanacGraphQL
from server.settings import Settings
from store import Store
from tests.conftest import almanac_process
from tests.server.graphql.subscriptions.test_subscriptions import (
    DEADLINE,
    SUBSCRIBE,
    newest_cursor,
    serving,
)

PROTOCOL = [Subprotocol("graphql-transport-ws")]
COST_POINTS = "almanac_query_cost_points_total"


@pytest.fixture
async def served(app: AlmanacApp) -> AsyncIterator[str]:
    async with serving(app) as address:
        yield address


@contextlib.asynccontextmanager
async def connected(address: str, **options: Any) -> AsyncIterator[ClientConnection]:
    async with websockets.connect(
        f"ws://{address}/graphql", subprotocols=PROTOCOL, **options
    ) as connection:
        yield connection


async def initialised(connection: ClientConnection, key: str | None = None) -> None:
    payload = {"Authorization": f"Bearer {key}"} if key else {}
    await connection.send(json.dumps({"type": "connection_init", "payload": payload}))
    acknowledged = json.loads(await asyncio.wait_for(connection.recv(), DEADLINE))
    assert acknowledged == {"type": "connection_ack"}


async def answer(connection: ClientConnection, id: str = "1") -> dict[str, Any]:
    """The next message for operation `id` (pings skipped)."""
    async with asyncio.timeout(DEADLINE):  # whole: pings come every 15 s
        while True:
            message = json.loads(await connection.recv())
            if message.get("id") == id:
                return message  # type: ignore[no-any-return]


async def closed_with(connection: ClientConnection) -> tuple[int, str]:
    """The close code and reason the server ends the connection with (messages skipped)."""
    with pytest.raises(websockets.ConnectionClosed) as closed:
        await skipping_messages(connection)
    assert closed.value.rcvd is not None, "closed without a close frame"
    return closed.value.rcvd.code, closed.value.rcvd.reason


async def skipping_messages(connection: ClientConnection) -> None:
    async with asyncio.timeout(DEADLINE):  # whole: pings come every 15 s
        while True:
            await connection.recv()


def subscribe(query: str | None = SUBSCRIBE, id: str = "1", **payload: Any) -> str:
    message = {"type": "subscribe", "id": id, "payload": {"query": query, **payload}}
    return json.dumps(message, ensure_ascii=False)  # sent as UTF-8, as a client sends it


def view_of(app: AlmanacApp) -> AlmanacGraphQL:
    [route] = [route for route in app.routes if isinstance(route, WebSocketRoute)]
    assert isinstance(route.endpoint, AlmanacGraphQL)
    return route.endpoint


def points_charged() -> float:
    return REGISTRY.get_sample_value(COST_POINTS) or 0.0


@pytest.mark.parametrize(
    "padding",
    [" " * 200_000, "# " + "é" * 60_000],  # bytes: 200,000; 120,000 in 60,000 characters
    ids=["ascii", "two-byte characters"],
)
async def test_a_message_over_the_body_limit_is_refused_before_it_is_decoded(
    served: str, padding: str
) -> None:
    # Uvicorn's own limit (16 MiB) is left as it is here: the app holds messages to its own.
    async with connected(served, max_size=None) as connection:
        await initialised(connection)
        await connection.send(subscribe("subscription { changes { sequence } " + padding))
        code, reason = await closed_with(connection)
    assert code == 1009
    assert "at most 100000 bytes" in reason


@pytest.mark.parametrize("settings", [Settings(max_tokens=100)])
async def test_a_websocket_document_is_parsed_within_the_token_limit(
    app: AlmanacApp, served: str
) -> None:
    long = "subscription { changes { " + "sequence " * 1_000 + "} }"
    before = points_charged()
    async with connected(served) as connection:
        await initialised(connection)
        await connection.send(subscribe(long))
        refused = await answer(connection)
    assert refused["type"] == "error"
    assert refused["payload"][0]["extensions"]["code"] == "TOO_MANY_TOKENS"
    assert points_charged() - before == MINIMUM
    # Refused by the token count, never parsed.
    known = app.services.shared.graphql.documents.get(long)
    assert known is not None
    assert isinstance(known.parsed, GraphQLError)


OVER_COST = "subscription { changes { read { added(first: 10000) { modelName } } } }"
REFUSED = [
    ("{ categories { slug } }", "BAD_REQUEST"),  # a query: not carried
    ("subscription { changes { sequence }", "GRAPHQL_PARSE_FAILED"),
    ("subscription { changes { nothing } }", "GRAPHQL_VALIDATION_FAILED"),
    (OVER_COST, "MAX_COST_EXCEEDED"),
]


@pytest.mark.parametrize(("query", "code"), REFUSED)
async def test_a_refused_websocket_operation_pays_the_minimum(
    served: str, query: str, code: str
) -> None:
    before = points_charged()
    async with connected(served) as connection:
        await initialised(connection)
        await connection.send(subscribe(query))
        refused = await answer(connection)
    assert refused["type"] == "error"
    assert refused["payload"][0]["extensions"]["code"] == code
    assert points_charged() - before == MINIMUM


async def test_a_subscription_refused_in_the_pipeline_over_sse_pays_the_minimum(
    client: httpx.AsyncClient,
) -> None:
    before = points_charged()
    headers = {"Accept": "text/event-stream"}
    async with client.stream(
        "POST", "/graphql", json={"query": OVER_COST}, headers=headers
    ) as response:
        lines = [line async for line in response.aiter_lines()]
    [data] = [json.loads(line.removeprefix("data: ")) for line in lines if line[6:7] == "{"]
    assert data["errors"][0]["extensions"]["code"] == "MAX_COST_EXCEEDED"
    assert points_charged() - before == MINIMUM


@pytest.mark.parametrize("method", ["GET", "POST"])
async def test_a_subscription_over_plain_http_is_refused_whole(
    client: httpx.AsyncClient, method: str
) -> None:
    query = {"query": "subscription { changes { sequence } }"}
    if method == "GET":
        response = await client.get("/graphql", params=query)
    else:
        response = await client.post("/graphql", json=query)
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["extensions"]["code"] == "BAD_REQUEST"
    assert "over a WebSocket" in error["message"]
    assert response.json()["extensions"]["cost"]["requestedQueryCost"] == MINIMUM


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture
def trusted(tmp_path: Path) -> Path:
    path = tmp_path / "trusted-documents.json"
    path.write_text(json.dumps({sha256(SUBSCRIBE): SUBSCRIBE}))
    return path


UNTRUSTED = "subscription { changes { sequence } }"


@contextlib.asynccontextmanager
async def trusted_server(store: Store, manifest: Path) -> AsyncIterator[str]:
    app = create_app(Settings(trusted_documents=manifest), store)
    try:
        async with serving(app) as address:
            yield address
    finally:
        await app.services.shared.budgets.close()


async def test_trusted_documents_hold_on_websockets(store: Store, trusted: Path) -> None:
    key = await create_key(store, "editor", "admin")
    async with trusted_server(store, trusted) as address, connected(address) as connection:
        await initialised(connection)
        await connection.send(subscribe(UNTRUSTED))
        refused = await answer(connection)
        assert refused["type"] == "error"
        assert refused["payload"][0]["extensions"]["code"] == "DOCUMENT_NOT_TRUSTED"
        # By its id, as over HTTP: admitted (it waits for a change, not refused).
        document_id = {"documentId": f"sha256:{sha256(SUBSCRIBE)}"}
        await connection.send(subscribe(None, id="2", extensions=document_id))
        persisted = {"persistedQuery": {"version": 1, "sha256Hash": sha256(SUBSCRIBE)}}
        await connection.send(subscribe(None, id="3", extensions=persisted))
        await connection.send(subscribe(SUBSCRIBE, id="4"))
        await connection.send(json.dumps({"type": "ping"}))
        while (message := json.loads(await connection.recv()))["type"] != "pong":
            assert message.get("type") not in ("error", "next", "complete"), message
    async with trusted_server(store, trusted) as address, connected(address) as connection:
        await initialised(connection, key)  # an admin key runs any document
        await connection.send(subscribe(UNTRUSTED))
        await connection.send(json.dumps({"type": "ping"}))
        while (message := json.loads(await connection.recv()))["type"] != "pong":
            assert message.get("type") != "error", message


async def test_trusted_documents_hold_on_sse(store: Store, trusted: Path) -> None:
    headers = {"Accept": "text/event-stream"}
    async with (
        trusted_server(store, trusted) as address,
        httpx.AsyncClient(base_url=f"http://{address}", timeout=DEADLINE) as http,
    ):
        untrusted = {"query": UNTRUSTED}
        async with http.stream("POST", "/graphql", json=untrusted, headers=headers) as refused:
            assert refused.status_code == 400  # before any stream begins
            answer = json.loads(await refused.aread())
        assert answer["errors"][0]["extensions"]["code"] == "DOCUMENT_NOT_TRUSTED"
        assert answer["extensions"]["cost"]["requestedQueryCost"] == MINIMUM
        body = {"documentId": f"sha256:{sha256(SUBSCRIBE)}"}
        async with http.stream("POST", "/graphql", json=body, headers=headers) as admitted:
            assert admitted.status_code == 200
            assert admitted.headers["content-type"].startswith("text/event-stream")


@pytest.mark.parametrize("settings", [Settings(subscription_key_check_seconds=0.2)])
async def test_a_revoked_keys_subscriptions_end(app: AlmanacApp, store: Store, served: str) -> None:
    key = await create_key(store, "reader", "read")
    async with httpx.AsyncClient(base_url=f"http://{served}", timeout=DEADLINE) as http:
        after = await newest_cursor(http)
        sse_body = {"query": SUBSCRIBE, "variables": {"after": after}}
        headers = {"Accept": "text/event-stream", "Authorization": f"Bearer {key}"}
        async with (
            connected(served) as connection,
            http.stream("POST", "/graphql", json=sse_body, headers=headers) as events,
        ):
            await initialised(connection, key)
            await connection.send(subscribe(variables={"after": after}))
            assert events.status_code == 200
            deadline = time.monotonic() + DEADLINE
            while view_of(app).subscriptions.open["key:reader"] < 2:  # both open
                assert time.monotonic() < deadline, "the subscriptions never opened"
                await asyncio.sleep(0.05)
            await revoke_key(store, "reader")
            ended = await answer(connection)
            assert ended["type"] == "next"
            assert ended["payload"]["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
            assert (await answer(connection))["type"] == "complete"
            # Nor does the revoked key start another on the connection it opened.
            await connection.send(subscribe(id="2", variables={"after": after}))
            refused = await answer(connection, "2")
            assert refused["type"] == "error"
            assert refused["payload"][0]["extensions"]["code"] == "UNAUTHENTICATED"
            lines = [line async for line in events.aiter_lines()]
    [data] = [json.loads(line.removeprefix("data: ")) for line in lines if line[6:7] == "{"]
    assert data["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"


@pytest.mark.parametrize("settings", [Settings(websocket_init_timeout_seconds=0.2)])
async def test_a_websocket_without_connection_init_is_closed(served: str) -> None:
    async with connected(served) as connection:
        assert await closed_with(connection) == (4408, "Connection initialisation timeout")


@pytest.mark.parametrize("settings", [Settings(websocket_idle_seconds=0.3)])
async def test_a_websocket_without_a_subscription_is_closed_when_idle(served: str) -> None:
    async with connected(served) as connection:
        await initialised(connection)
        code, reason = await closed_with(connection)
    assert (code, reason) == (1000, "Idle: no subscription for 0.3 s.")


MALFORMED = [
    ([subscribe()], 4401),  # before connection_init
    (['{"type": "connection_init", "payload": []}'], 4400),
    (["[1, 2]"], 4400),
    (['"text"'], 4400),
    (["{not json"], 4400),
    (['{"type": 7}'], 4400),
    (['{"type": "unknown"}'], 4400),
    (['{"type": "connection_init"}', '{"type": "connection_init"}'], 4429),
    (['{"type": "connection_init"}', '{"type": "subscribe", "payload": {}}'], 4400),
    (['{"type": "connection_init"}', '{"type": "subscribe", "id": ["x"], "payload": {}}'], 4400),
    (['{"type": "connection_init"}', '{"type": "subscribe", "id": "1", "payload": "x"}'], 4400),
    (['{"type": "connection_init"}', '{"type": "subscribe", "id": "1"}'], 4400),
    (['{"type": "connection_init"}', subscribe(5)], 4400),  # type: ignore[arg-type]
    (['{"type": "connection_init"}', subscribe(variables=[1])], 4400),
    (['{"type": "connection_init"}', '{"type": "complete", "id": 1}'], 4400),
    (['{"type": "connection_init"}', subscribe(), subscribe()], 4409),
]


@pytest.mark.parametrize(("messages", "code"), MALFORMED)
async def test_a_malformed_message_closes_with_the_protocols_code_and_no_traceback(
    served: str, messages: list[str], code: int, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        async with connected(served) as connection:
            for message in messages:
                await connection.send(message)
            closed, _ = await closed_with(connection)
        assert closed == code
        await asyncio.sleep(0)  # a task's failure would be logged as it ends
    assert [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info] == []


def binary_message(size: int) -> bytes:
    """A subscribe message of `size` bytes whose query compresses to almost nothing."""
    head = '{"type":"subscribe","id":"1","payload":{"query":"subscription { changes { sequence'
    tail = ' } }"}}'
    return (head + " " * (size - len(head) - len(tail)) + tail).encode()


def peak_rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


@contextlib.contextmanager
def healthz_watched(url: str) -> Iterator[list[float]]:
    """/healthz asked again and again while the block runs: the longest answer's seconds (a
    failure or a wait past 5 s counts as 5 s)."""
    slowest = [0.0]
    done = threading.Event()

    def watch() -> None:
        with httpx.Client(timeout=5) as client:
            while not done.is_set():
                start = time.monotonic()
                try:
                    client.get(f"{url}/healthz").raise_for_status()
                    took = time.monotonic() - start
                except httpx.HTTPError:
                    took = 5.0
                slowest[0] = max(slowest[0], took)
                time.sleep(0.02)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        yield slowest
    finally:
        done.set()
        watcher.join()


def test_a_16_mb_compressed_message_is_refused_without_stalling_the_server() -> None:
    message = binary_message(16_000_000)
    assert len(zlib.compress(message)) < 100_000  # some KB on the wire, compressed
    with almanac_process() as served:
        address = served.url.removeprefix("http://")
        httpx.get(f"{served.url}/healthz")
        before = peak_rss_kb(served.process.pid)

        async def send() -> tuple[int, str]:
            # Compressed (per-message-deflate, offered by default); no limit of its own.
            async with connected(address, max_size=None) as connection:
                await initialised(connection)
                await connection.send(message.decode())
                return await closed_with(connection)

        with healthz_watched(served.url) as slowest:
            code, _ = asyncio.run(send())
            time.sleep(0.5)  # anything the message left to do, done while watched
        grown_mb = (peak_rss_kb(served.process.pid) - before) / 1024
    assert code == 1009
    assert grown_mb < 50, f"the server's memory grew {grown_mb:.0f} MB"
    # A stall of seconds is the defect (18.6 s before): measured, /healthz's slowest answer
    # here is some 0.01 s (docs/performance.md), far below this bound on a loaded machine.
    assert slowest[0] < 5, f"/healthz took {slowest[0]:.2f} s"
