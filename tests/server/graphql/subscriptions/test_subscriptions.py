"""Subscriptions through a real server: `Subscription.changes` over graphql-transport-ws (with
the `gql` client) and over SSE, each change in order, from a cursor, made by this process or
another; the bound on open subscriptions per key, in one process and across two sharing Redis
(and per process while Redis is out of reach); a subscriber out of budget closed (THROTTLED).
"""

import asyncio
import contextlib
import json
import logging
import signal
import socket
import time
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
import websockets
from gql import Client, GraphQLRequest
from gql.transport.exceptions import TransportQueryError
from gql.transport.websockets import WebsocketsTransport
from redis.asyncio import Redis
from starlette.applications import Starlette
from starlette.routing import WebSocketRoute
from websockets import Subprotocol

from api_errors import ApiError, ErrorCode
from request_limits import LocalSlots
from request_limits.slots import LEASE_SECONDS
from server.api_keys import create_key
from server.app import create_app
from server.charges import MINIMUM
from server.graphql.subscriptions import protocols as subscriptions
from server.graphql.view import AlmanacGraphQL
from server.settings import Settings
from store import Store, encode_change_cursor
from tests.conftest import almanac_process, free_port, live_almanac
from tests.server.cli.test_cli_import import almanac
from tests.store.test_changes import another_process, changed

GENERAL = "code-interpreter-benchmark-general"
DEADLINE = 60.0  # seconds: generous, for a loaded machine; no test waits it out when it works
SUBSCRIBE = """subscription($after: String, $filter: ChangeFilter) {
  changes(after: $after, filter: $filter) { sequence kind slug recordedBy cursor }
}"""
COSTLY = """subscription($after: String) {
  changes(after: $after) {
    sequence
    read { added(first: 100) { modelName } removed(first: 100) { modelName } }
  }
}"""
RECORD = """mutation($slug: String!, $input: LeaderboardReadInput!) {
  recordLeaderboardRead(benchmark: $slug, input: $input) { recorded } }"""
READ = {
    "readOn": "2026-11-20",
    "entries": [
        {"modelName": "Qwen-14B-Chat", "score": 99.0, "setting": "v1", "publishedOn": "2026-11-01"}
    ],
    "allowRemovals": True,
}
NEWEST = "{ changes(first: 1) { newestCursor } }"


@contextlib.asynccontextmanager
async def serving(
    app: Starlette, *, send_buffer: int | None = None, **options: Any
) -> AsyncIterator[str]:
    """The app served by Uvicorn in this process, on loopback: its address. With
    `send_buffer`, each connection's kernel send buffer is that small (SO_SNDBUF, which
    accepted sockets take from the listening one); `options` are Uvicorn's."""
    listening = socket.socket()
    if send_buffer is not None:
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, send_buffer)
    listening.bind(("127.0.0.1", 0))
    port = listening.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", **options))
    task = asyncio.create_task(server.serve(sockets=[listening]))
    deadline = time.monotonic() + DEADLINE
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        assert not task.done(), "the server did not start"
        await asyncio.sleep(0.05)
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task
        listening.close()


async def newest_cursor(http: httpx.AsyncClient) -> str:
    answer = (await http.post("/graphql", json={"query": NEWEST})).json()
    cursor: str = answer["data"]["changes"]["newestCursor"]
    return cursor


def websocket(address: str, key: str | None = None) -> Client:
    payload = {"Authorization": f"Bearer {key}"} if key else {}
    transport = WebsocketsTransport(url=f"ws://{address}/graphql", init_payload=payload)
    return Client(transport=transport)


async def events(
    client: Client, count: int, query: str = SUBSCRIBE, **variables: Any
) -> list[dict[str, Any]]:
    """The first `count` changes a subscriber over graphql-transport-ws is sent."""
    got: list[dict[str, Any]] = []
    async with client as session:
        async for result in session.subscribe(GraphQLRequest(query, variable_values=variables)):
            got.append(result["changes"])
            if len(got) == count:
                break
    return got


@pytest.fixture
async def served(app: Starlette) -> AsyncIterator[str]:
    async with serving(app) as address:
        yield address


@pytest.fixture
async def http(served: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=f"http://{served}", timeout=DEADLINE) as client:
        yield client


async def test_a_websocket_subscriber_sees_each_change_in_order_from_this_process_and_another(
    store: Store, served: str, http: httpx.AsyncClient
) -> None:
    key = await create_key(store, "editor", "admin")
    after = await newest_cursor(http)
    subscriber = asyncio.create_task(
        asyncio.wait_for(events(websocket(served, key), 2, after=after), DEADLINE)
    )
    recorded = await http.post(
        "/graphql",
        json={"query": RECORD, "variables": {"slug": GENERAL, "input": READ}},
        headers={"Authorization": f"Bearer {key}"},
    )
    assert "errors" not in recorded.json(), recorded.text
    elsewhere = another_process(store)
    await changed(elsewhere, GENERAL, note="Checked again.")  # seen by the app's follower

    read, updated = await subscriber
    assert (read["kind"], read["slug"], read["recordedBy"]) == ("READ_RECORDED", GENERAL, "editor")
    assert (updated["kind"], updated["slug"]) == ("BENCHMARK_UPDATED", GENERAL)
    assert updated["sequence"] == read["sequence"] + 1

    # Reconnecting from the first change's cursor misses nothing after it.
    [again] = await asyncio.wait_for(
        events(websocket(served, key), 1, after=read["cursor"]), DEADLINE
    )
    assert again == updated


async def test_a_filter_narrows_what_is_sent(
    store: Store, served: str, http: httpx.AsyncClient
) -> None:
    after = await newest_cursor(http)
    only_reads = {"kinds": ["READ_RECORDED"]}
    subscriber = asyncio.create_task(
        asyncio.wait_for(events(websocket(served), 1, after=after, filter=only_reads), DEADLINE)
    )
    await changed(store, GENERAL, note="Not a read.")
    key = await create_key(store, "editor", "admin")
    await http.post(
        "/graphql",
        json={"query": RECORD, "variables": {"slug": GENERAL, "input": READ}},
        headers={"Authorization": f"Bearer {key}"},
    )
    [read] = await subscriber
    assert read["kind"] == "READ_RECORDED"


async def sse_events(http: httpx.AsyncClient, count: int, **variables: Any) -> list[dict[str, Any]]:
    """The first `count` `next` events of a subscription over SSE (GraphQL over SSE)."""
    got: list[dict[str, Any]] = []
    body = {"query": SUBSCRIBE, "variables": variables}
    headers = {"Accept": "text/event-stream"}
    async with http.stream("POST", "/graphql", json=body, headers=headers) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        event = None
        async for line in response.aiter_lines():
            if line.startswith("event: "):
                event = line.removeprefix("event: ")
            elif line.startswith("data: ") and event == "next":
                got.append(json.loads(line.removeprefix("data: ")))
                if len(got) == count:
                    return got
    return got


async def test_an_sse_subscriber_sees_a_change_made_by_another_process(
    store: Store, http: httpx.AsyncClient
) -> None:
    after = await newest_cursor(http)
    subscriber = asyncio.create_task(asyncio.wait_for(sse_events(http, 1, after=after), DEADLINE))
    await changed(another_process(store), GENERAL, note="Checked again.")
    [event] = await subscriber
    assert "errors" not in event, event
    assert (event["data"]["changes"]["kind"], event["data"]["changes"]["slug"]) == (
        "BENCHMARK_UPDATED",
        GENERAL,
    )


async def test_a_cursor_past_retention_is_refused_as_the_feed_refuses_it(
    store: Store, served: str
) -> None:
    start = encode_change_cursor((await store.change_bounds())[1] - 1)
    pruning = another_process(store, retention=timedelta(0))
    await changed(pruning, GENERAL, note="Checked again.")  # every older change pruned
    with pytest.raises(TransportQueryError) as refused:
        await asyncio.wait_for(events(websocket(served), 1, after=start), DEADLINE)
    assert refused.value.errors is not None
    [error] = refused.value.errors
    assert error["extensions"]["code"] == "CURSOR_EXPIRED"
    assert "/export.ndjson" in error["message"]


@pytest.mark.parametrize("settings", [Settings(max_subscriptions_per_key=1)])
async def test_a_key_holding_its_most_subscriptions_is_refused_another(
    store: Store, served: str, http: httpx.AsyncClient
) -> None:
    key = await create_key(store, "reader", "read")
    after = await newest_cursor(http)
    first = asyncio.create_task(events(websocket(served, key), 1, after=after))
    # The second, once the first is open (the first waits for a change that is not made yet).
    deadline = time.monotonic() + DEADLINE
    while (errors := await refusal(websocket(served, key), after)) is None:
        assert time.monotonic() < deadline, "the second subscription was never refused"
    [error] = errors
    assert "1 subscriptions are open already" in error["message"]
    assert error["extensions"]["code"] == "THROTTLED"
    assert not first.done()
    first.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await first


async def refusal(client: Client, after: str) -> list[Any] | None:
    """The errors a subscription is refused with, or None if it was admitted (it waits for a
    change that is not made, and is let go after a while)."""
    try:
        await asyncio.wait_for(events(client, 1, after=after), 2)
    except TransportQueryError as refused:
        return refused.errors or []
    except TimeoutError:
        return None
    raise AssertionError("a change was sent, though none was made")


@pytest.mark.parametrize(
    "settings",
    [Settings(key_bucket_capacity=1_000, key_restore_rate=0.001, max_query_cost=1_000)],
)
async def test_a_subscriber_out_of_budget_is_closed_with_throttled(
    store: Store, served: str, http: httpx.AsyncClient
) -> None:
    key = await create_key(store, "reader", "read")
    after = await newest_cursor(http)
    sent: list[dict[str, Any]] = []

    async def subscribe() -> TransportQueryError:
        async with websocket(served, key) as session:
            try:
                request = GraphQLRequest(COSTLY, variable_values={"after": after})
                async for result in session.subscribe(request):
                    sent.append(result["changes"])
            except TransportQueryError as closed:
                return closed
        raise AssertionError("the subscription ended without a reason")

    subscriber = asyncio.create_task(asyncio.wait_for(subscribe(), DEADLINE))
    for number in range(100):  # far more events than the budget pays for
        await changed(store, GENERAL, note=f"Change {number}.")
        if subscriber.done():
            break
    closed = await subscriber
    assert closed.errors is not None
    assert closed.errors[0]["extensions"]["code"] == "THROTTLED"
    assert 0 < len(sent) < 100
    assert [change["sequence"] for change in sent] == sorted(change["sequence"] for change in sent)


@pytest.fixture
def served_almanac(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    data = tmp_path / "served"
    with live_almanac(data_dir=str(data)) as (url, _):
        yield url, data


def test_a_subscriber_sees_a_read_imported_by_the_cli_in_another_process(
    served_almanac: tuple[str, Path], tmp_path: Path
) -> None:
    url, data = served_almanac
    after = httpx.post(f"{url}/graphql", json={"query": NEWEST}).json()["data"]["changes"][
        "newestCursor"
    ]
    rows = tmp_path / "rows.csv"
    rows.write_text(
        f"benchmark,read_on,model_name,score\n{GENERAL},2026-11-20,Qwen-14B-Chat,99\n",
        encoding="utf-8",
    )

    async def watch() -> list[dict[str, Any]]:
        address = url.removeprefix("http://")
        subscriber = asyncio.create_task(events(websocket(address), 1, after=after))
        imported = await asyncio.to_thread(almanac, data, "import", str(rows), "--allow-removals")
        assert imported.returncode == 0, imported.stdout + imported.stderr
        return await asyncio.wait_for(subscriber, DEADLINE)

    [read] = asyncio.run(watch())
    assert (read["kind"], read["slug"]) == ("READ_RECORDED", GENERAL)


async def test_an_idle_websocket_is_pinged(served: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(subscriptions, "HEARTBEAT_SECONDS", 0.05)
    async with websockets.connect(
        f"ws://{served}/graphql", subprotocols=[Subprotocol("graphql-transport-ws")]
    ) as connection:
        await connection.send(json.dumps({"type": "connection_init", "payload": {}}))
        acknowledged = json.loads(await asyncio.wait_for(connection.recv(), DEADLINE))
        assert acknowledged == {"type": "connection_ack"}
        pinged = json.loads(await asyncio.wait_for(connection.recv(), DEADLINE))
        assert pinged == {"type": "ping"}


async def test_a_bad_key_in_connection_init_closes_the_connection(served: str) -> None:
    async with websockets.connect(
        f"ws://{served}/graphql", subprotocols=[Subprotocol("graphql-transport-ws")]
    ) as connection:
        init = {"type": "connection_init", "payload": {"Authorization": "Bearer alm_nonsense"}}
        await connection.send(json.dumps(init))
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await asyncio.wait_for(connection.recv(), DEADLINE)
    assert closed.value.rcvd is not None
    assert closed.value.rcvd.code == 4403


def test_sigterm_completes_open_subscriptions_during_the_drain() -> None:
    with almanac_process(shutdown_drain_seconds="30") as served:
        after = httpx.post(f"{served.url}/graphql", json={"query": NEWEST}).json()["data"][
            "changes"
        ]["newestCursor"]

        async def watch() -> tuple[dict[str, Any], list[dict[str, Any]]]:
            request = GraphQLRequest(SUBSCRIBE, variable_values={"after": after})
            async with websocket(served.url.removeprefix("http://")) as session:
                stream = session.subscribe(request)
                recorded = await asyncio.to_thread(
                    httpx.post,
                    f"{served.url}/graphql",
                    json={"query": RECORD, "variables": {"slug": GENERAL, "input": READ}},
                    headers={"Authorization": f"Bearer {served.key}"},
                )
                assert "errors" not in recorded.json(), recorded.text
                first = await asyncio.wait_for(anext(stream), DEADLINE)  # open, for sure
                served.process.send_signal(signal.SIGTERM)
                rest = await asyncio.wait_for(_rest(stream), DEADLINE)
            return first, rest

        first, rest = asyncio.run(watch())
        assert first["changes"]["kind"] == "READ_RECORDED"
        assert rest == []  # completed, without an error, well before the 30 s drain ends
        assert served.process.poll() is None  # still draining: it was the drain that ended it


async def _rest(stream: AsyncIterator[dict[str, Any]]) -> list[dict[str, Any]]:
    return [result async for result in stream]


async def test_a_mutation_over_a_websocket_is_refused_and_not_run(
    store: Store, served: str
) -> None:
    before = await store.change_bounds()
    request = GraphQLRequest(RECORD, variable_values={"slug": GENERAL, "input": READ})
    with pytest.raises(TransportQueryError) as refused:
        async with websocket(served) as session:
            await asyncio.wait_for(session.execute(request), DEADLINE)
    assert refused.value.errors is not None
    [error] = refused.value.errors
    assert error["extensions"]["code"] == "BAD_REQUEST"
    assert "send queries and mutations as HTTP requests" in error["message"]
    assert await store.change_bounds() == before


async def test_a_query_over_sse_is_refused_before_the_stream_begins(
    http: httpx.AsyncClient,
) -> None:
    body = {"query": "{ benchmarks(first: 1) { nodes { slug } } }"}
    response = await http.post("/graphql", json=body, headers={"Accept": "text/event-stream"})
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["extensions"]["code"] == "BAD_REQUEST"
    assert "send queries and mutations as HTTP requests" in error["message"]
    assert response.json()["extensions"]["cost"]["requestedQueryCost"] == MINIMUM


class Kept(logging.Handler):
    """Keeps the error records logged."""

    def __init__(self, records: list[logging.LogRecord]) -> None:
        super().__init__(logging.ERROR)
        self.records = records

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


async def test_an_sse_subscriber_that_leaves_is_let_go_cleanly(
    app: Starlette, http: httpx.AsyncClient
) -> None:
    failures: list[logging.LogRecord] = []
    handler = Kept(failures)
    logging.getLogger("uvicorn.error").addHandler(handler)
    [route] = [route for route in app.routes if isinstance(route, WebSocketRoute)]
    view = route.endpoint
    assert isinstance(view, AlmanacGraphQL)
    try:
        after = await newest_cursor(http)
        body = {"query": SUBSCRIBE, "variables": {"after": after}}
        headers = {"Accept": "text/event-stream"}
        async with http.stream("POST", "/graphql", json=body, headers=headers) as response:
            assert response.status_code == 200
            deadline = time.monotonic() + DEADLINE
            while not view.subscriptions.open:  # open, and waiting for a change
                assert time.monotonic() < deadline, "the subscription never opened"
                await asyncio.sleep(0.05)
        # The client has left, mid-stream.
        while view.subscriptions.open:
            assert time.monotonic() < deadline, "the subscription was never let go"
            await asyncio.sleep(0.05)
        assert (await http.get("/healthz")).status_code == 200
    finally:
        logging.getLogger("uvicorn.error").removeHandler(handler)
    assert [record.getMessage() for record in failures] == []


@contextlib.asynccontextmanager
async def two_processes(store: Store, settings: Settings) -> AsyncIterator[tuple[str, str]]:
    """Two apps on one store with the same `settings`, as two processes behind a load
    balancer, each served by Uvicorn on loopback: their addresses."""
    one, two = create_app(settings, store), create_app(settings, store)
    try:
        async with serving(one) as first, serving(two) as second:
            yield first, second
    finally:
        for app in (one, two):
            await app.services.shared.budgets.close()


async def refused_at_last(client: Callable[[], Client], after: str) -> list[Any]:
    """The errors a subscription is refused with, trying again until it is (the first one,
    elsewhere, is opening meanwhile)."""
    deadline = time.monotonic() + DEADLINE
    while (errors := await refusal(client(), after)) is None:
        assert time.monotonic() < deadline, "the subscription was never refused"
    return errors


async def test_two_processes_share_one_bound_per_key_in_redis(store: Store, redis_url: str) -> None:
    settings = Settings(
        max_subscriptions_per_key=1,
        redis_url=redis_url,
        redis_key_prefix=f"almanac-test-{uuid.uuid4().hex}:",
    )
    key = await create_key(store, "reader", "read")
    async with two_processes(store, settings) as (one, two):
        async with httpx.AsyncClient(base_url=f"http://{one}", timeout=DEADLINE) as http:
            after = await newest_cursor(http)
        first = asyncio.create_task(events(websocket(one, key), 1, after=after))
        [error] = await refused_at_last(lambda: websocket(two, key), after)
        assert error["extensions"]["code"] == "THROTTLED"
        assert error["extensions"]["openSubscriptions"] == 1
        assert error["extensions"]["maximum"] == 1
        assert not first.done()
        first.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await first
        # Its lease given back, the other process admits one.
        deadline = time.monotonic() + DEADLINE
        while await refusal(websocket(two, key), after) is not None:
            assert time.monotonic() < deadline, "the slot was never freed"


async def test_a_lease_left_by_a_vanished_process_frees_its_slot_when_it_lapses(
    store: Store, redis_url: str
) -> None:
    prefix = f"almanac-test-{uuid.uuid4().hex}:"
    settings = Settings(max_subscriptions_per_key=1, redis_url=redis_url, redis_key_prefix=prefix)
    key = await create_key(store, "reader", "read")
    leases = f"{prefix}subscriptions:key:reader"
    redis = Redis.from_url(redis_url)
    # A process killed outright: its lease stays, unrenewed, until it lapses.
    await redis.zadd(leases, {"vanished": time.time() + LEASE_SECONDS})
    async with two_processes(store, settings) as (one, _):
        async with httpx.AsyncClient(base_url=f"http://{one}", timeout=DEADLINE) as http:
            after = await newest_cursor(http)
        [error] = await refused_at_last(lambda: websocket(one, key), after)
        assert error["extensions"]["code"] == "THROTTLED"
        await redis.zadd(leases, {"vanished": time.time() - 1})  # as LEASE_SECONDS later
        assert await refusal(websocket(one, key), after) is None
    await redis.aclose()


async def test_a_redis_outage_counts_subscriptions_in_each_process(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    settings = Settings(max_subscriptions_per_key=1, redis_url=f"redis://127.0.0.1:{free_port()}/0")
    key = await create_key(store, "reader", "read")
    with caplog.at_level(logging.WARNING, logger="almanac.subscriptions"):
        async with two_processes(store, settings) as (one, two):
            async with httpx.AsyncClient(base_url=f"http://{one}", timeout=DEADLINE) as http:
                after = await newest_cursor(http)
            first = asyncio.create_task(events(websocket(one, key), 1, after=after))
            [error] = await refused_at_last(lambda: websocket(one, key), after)
            assert error["extensions"]["code"] == "THROTTLED"
            # The other process counts its own: the bound holds in each, as without Redis.
            assert await refusal(websocket(two, key), after) is None
            first.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await first
    said = [r.getMessage() for r in caplog.records if r.name == "almanac.subscriptions"]
    assert len(said) == 2  # once in each process
    assert all("Redis failed" in message for message in said)
    assert all("counted in this process" in message for message in said)


UNAUTHENTICATED = ApiError("This API key was revoked.", code=ErrorCode.UNAUTHENTICATED)


async def test_a_key_that_cannot_be_read_is_read_again_not_dropped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The store not answering a key check leaves the stream open, says so, and checks again:
    a revocation found then still ends it."""
    opened = subscriptions.Subscriptions(
        per_key=1,
        anonymous=1,
        send_timeout=10,
        slots=LocalSlots(),
        key_check_seconds=0.01,
        idle_seconds=60,
    )
    answers: list[OSError | ApiError | None] = [OSError("store down"), None, UNAUTHENTICATED]

    async def still_valid() -> ApiError | None:
        answer = answers.pop(0) if answers else UNAUTHENTICATED
        if isinstance(answer, OSError):
            raise answer
        return answer

    async def never_ends() -> AsyncGenerator[str, None]:
        await asyncio.Event().wait()
        yield "never"

    stream = opened.stream("key:one", True, never_ends(), still_valid)
    async with asyncio.timeout(60):
        last = [result async for result in stream][-1]
    assert last.errors[0].message == UNAUTHENTICATED.message
    assert answers == []  # read three times: the failure, still valid, revoked
    assert "could not be read" in caplog.text
