"""Read-your-writes through the real paths (server.min_change): a mutation answers with
its change's cursor (`extensions.changeCursor`, `Almanac-Change-Cursor`), a read sent with it
(`Almanac-Min-Change`, `extensions.minChange`) is answered only once the process answering has
applied that change, on both stores, and across the workers of `almanac serve --workers 2`; a
key reads its own writes without sending anything; a malformed or future cursor is refused
at once, paying the minimum.

Another process's write is made here by a second store on the same database (what another
process is to this one): the app's follower is not running until the test starts it, so the
change stays unapplied for as long as the test needs, with no clock involved."""

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client import REGISTRY

from editing import BenchmarkFields, Editor
from server.charges import MINIMUM
from server.settings import Settings
from store import ChangeReceipt, Store, decode_change_cursor, encode_change_cursor
from store.changes import LogFollower
from store.client import connect
from store.mongo import MongoStore
from store.sqlite import SqliteStore
from tests.conftest import GraphQLClient, almanac_process
from tests.server.transport.test_shutdown import poll

SLUG = "code-interpreter-benchmark-general"
READ = f'query Described {{ benchmark(slug: "{SLUG}") {{ description }} }}'
DESCRIBE = (
    "mutation($text: String!, $dry: Boolean! = false) { "
    f'updateBenchmark(slug: "{SLUG}", input: {{description: $text}}, dryRun: $dry) '
    "{ description } }"
)
CHANGES = "{ changes(last: 1) { nodes { cursor subject { ... on Benchmark { slug } } } } }"
PROBLEM = "application/graphql-response+json"
WAITS = "almanac_min_change_waits_total"
PROCESS_PREFIX = 16  # hex characters of an X-Request-ID that name the process


@pytest.fixture
def settings() -> Settings:
    # The shortest deadline: a change never applied (no follower) is given up on soon.
    return Settings(request_timeout_seconds=1)


def follower_of(store: Store) -> LogFollower:
    assert isinstance(store, SqliteStore | MongoStore)
    return store.follower


@pytest.fixture
async def other(store: Store, data_dir: Path) -> AsyncIterator[Store]:
    """Another process's store on the same database; this process's follower starts from
    where it stands now (the lifespan starts it so), not from after the other's writes."""
    follower_of(store).start(store.version.applied_through)
    opened = MongoStore(store.db) if isinstance(store, MongoStore) else connect(None, "", data_dir)
    opened.version.known = True
    yield opened
    if isinstance(opened, SqliteStore):
        await opened.close()


@contextlib.asynccontextmanager
async def following(store: Store) -> AsyncIterator[None]:
    """This process's follower running, as the server's lifespan runs it."""
    task = asyncio.create_task(store.follow_changes())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def described_elsewhere(other: Store, text: str, name: str | None = None) -> str:
    """The description (or the name) changed by the other process: its change's cursor."""
    receipt = ChangeReceipt()
    editor = Editor(other, by="elsewhere", receipt=receipt)
    changed = BenchmarkFields(name=name) if name else BenchmarkFields(description=text)
    await editor.update_benchmark(SLUG, changed, None)
    assert receipt.newest is not None
    return encode_change_cursor(receipt.newest)


async def read(
    client: httpx.AsyncClient, minimum: str | None = None, key: str | None = None, **extensions: Any
) -> httpx.Response:
    headers = {"accept": PROBLEM}
    if minimum is not None:
        headers["almanac-min-change"] = minimum
    if key is not None:
        headers["authorization"] = f"Bearer {key}"
    body: dict[str, Any] = {"query": READ}
    if extensions:
        body["extensions"] = extensions
    return await client.post("/graphql", json=body, headers=headers)


def description(response: httpx.Response) -> str:
    assert response.status_code == 200, response.text
    text: str = response.json()["data"]["benchmark"]["description"]
    return text


def code(response: httpx.Response) -> str:
    found: str = response.json()["errors"][0]["extensions"]["code"]
    return found


def waits(outcome: str) -> float:
    return REGISTRY.get_sample_value(WAITS, {"outcome": outcome}) or 0.0


async def test_a_mutation_answers_with_its_changes_cursor(
    admin: GraphQLClient, client: httpx.AsyncClient, store: Store
) -> None:
    answered = await client.post(
        "/graphql",
        json={"query": DESCRIBE, "variables": {"text": "Described once"}},
        headers=admin.headers,
    )
    cursor = answered.json()["extensions"]["changeCursor"]
    assert answered.headers["almanac-change-cursor"] == cursor
    sequence = decode_change_cursor(cursor)
    assert sequence is not None
    [change] = await store.changes_after(sequence - 1, 1)
    assert (change.sequence, change.slug, change.kind.value) == (
        sequence,
        SLUG,
        "benchmark_updated",
    )
    # The feed names the change by the same cursor (as subscriptions and webhooks do).
    [node] = (await admin.data(CHANGES))["changes"]["nodes"]
    assert node == {"cursor": cursor, "subject": {"slug": SLUG}}


async def test_each_operation_of_a_batch_names_its_own_change(
    admin: GraphQLClient, client: httpx.AsyncClient, store: Store
) -> None:
    """A dry run writes nothing and a change that changes nothing is not written: neither
    names a change. The header names the newest the request made."""
    batch = [
        {"query": DESCRIBE, "variables": {"text": "First"}},
        {"query": DESCRIBE, "variables": {"text": "First"}},  # unchanged
        {"query": DESCRIBE, "variables": {"text": "Never", "dry": True}},
        {"query": DESCRIBE, "variables": {"text": "Second"}},
        {"query": READ},
    ]
    answered = await client.post("/graphql", json=batch, headers=admin.headers)
    parts = answered.json()
    cursors = [part.get("extensions", {}).get("changeCursor") for part in parts]
    assert [cursor is not None for cursor in cursors] == [True, False, False, True, False]
    first, second = decode_change_cursor(cursors[0]) or 0, decode_change_cursor(cursors[3]) or 0
    assert 0 < first < second
    assert answered.headers["almanac-change-cursor"] == cursors[3]
    assert parts[4]["data"]["benchmark"]["description"] == "Second"
    assert (await store.change_bounds())[1] == second
    dry = await client.post("/graphql", json=batch[2], headers=admin.headers)
    assert "almanac-change-cursor" not in dry.headers
    assert "changeCursor" not in dry.json()["extensions"]


async def test_a_read_with_a_cursor_waits_for_its_change_to_be_applied_here(
    client: httpx.AsyncClient, store: Store, other: Store
) -> None:
    before = description(await read(client))
    assert description(await read(client)) == before  # kept
    cursor = await described_elsewhere(other, "Described elsewhere")

    # Not applied here (no follower runs yet): without the cursor, the answer kept before it;
    # with it, a wait that ends with the request's deadline, a typed error and no answer.
    assert description(await read(client)) == before
    timed_out = waits("timed_out")
    refused = await read(client, cursor)
    assert (refused.status_code, code(refused)) == (504, "CHANGE_NOT_REACHED")
    assert "data" not in refused.json()
    assert refused.json()["extensions"]["cost"]["requestedQueryCost"] == MINIMUM
    assert waits("timed_out") == timed_out + 1

    # The follower reads the log as the server's does: the cursor's read sees the change.
    async with following(store):
        assert description(await read(client, cursor)) == "Described elsewhere"
        assert description(await read(client, None, **{"minChange": cursor})) == (
            "Described elsewhere"
        )
    assert waits("applied") > 0


async def test_a_key_reads_its_own_writes_without_sending_anything(
    admin: GraphQLClient, client: httpx.AsyncClient, store: Store, other: Store
) -> None:
    """Its own last change here is its minimum: here, behind another process's change it
    has not applied, so its read waits for both (and anonymous readers do not)."""
    key = admin.headers["Authorization"].removeprefix("Bearer ")
    await described_elsewhere(other, "Described elsewhere")
    own = await client.post(
        "/graphql",
        json={"query": DESCRIBE, "variables": {"text": "Described here"}},
        headers=admin.headers,
    )
    assert own.json()["data"]["updateBenchmark"]["description"] == "Described here"
    anonymous = await read(client)
    assert description(anonymous) == "Described here"  # read from the store, not waited for
    waited = await read(client, key=key)
    assert code(waited) == "CHANGE_NOT_REACHED"
    async with following(store):
        assert description(await read(client, key=key)) == "Described here"


async def test_a_download_or_export_with_a_cursor_waits_for_its_change(
    client: httpx.AsyncClient, store: Store, other: Store
) -> None:
    """The other GET resources keep answers as GraphQL does: the header holds for them too."""
    download = f"/benchmarks/{SLUG}.json"
    before = (await client.get(download)).json()["name"]
    cursor = await described_elsewhere(other, "", name="Renamed elsewhere")
    assert (await client.get(download)).json()["name"] == before  # kept, not applied yet
    asked = {"almanac-min-change": cursor}
    for path in (download, "/export.ndjson", "/changes.atom"):
        refused = await client.get(path, headers=asked)
        assert (refused.status_code, code(refused)) == (504, "CHANGE_NOT_REACHED"), path
        assert refused.headers["almanac-cost"] == str(MINIMUM)
    malformed = await client.get("/export.ndjson", headers={"almanac-min-change": "nope"})
    assert (malformed.status_code, code(malformed)) == (400, "BAD_REQUEST")
    async with following(store):
        assert (await client.get(download, headers=asked)).json()["name"] == "Renamed elsewhere"
        exported = await client.get("/export.ndjson", headers=asked)
        assert b"Renamed elsewhere" in exported.content


async def test_a_malformed_or_future_cursor_is_refused_at_once(
    client: httpx.AsyncClient, store: Store
) -> None:
    _, newest = await store.change_bounds()
    for minimum, extensions in (
        ("nope", {}),
        (encode_change_cursor(1).replace("=", "") + "!", {}),
        (None, {"minChange": 42}),
        (None, {"minChange": "Y2hhbmdlOi0x"}),  # "change:-1"
    ):
        refused = await read(client, minimum, **extensions)
        assert (refused.status_code, code(refused)) == (400, "BAD_REQUEST"), refused.text
        assert refused.json()["extensions"]["cost"]["requestedQueryCost"] == MINIMUM
    refusals = waits("refused")
    # A malformed header refuses the whole request, as HTTP-level problems are (400 with JSON).
    legacy = await client.post(
        "/graphql", json={"query": READ}, headers={"almanac-min-change": "nope"}
    )
    assert (legacy.status_code, code(legacy)) == (400, "BAD_REQUEST")
    future = await read(client, encode_change_cursor(newest + 1))
    assert code(future) == "CHANGE_NOT_FOUND"
    assert "data" not in future.json()
    assert waits("refused") == refusals + 1
    # A cursor of a change applied here, or of none (0), is answered at once.
    assert description(await read(client, encode_change_cursor(newest)))
    assert description(await read(client, encode_change_cursor(0)))


def answering(response: httpx.Response) -> str:
    return response.headers["x-request-id"][:PROCESS_PREFIX]


@pytest.fixture(scope="module")
def workers() -> Iterator[Any]:
    unrefusing = {"anonymous_bucket_capacity": "1000000000", "anonymous_restore_rate": "1000000000"}
    with almanac_process("--workers", "2", shutdown_drain_seconds="0", **unrefusing) as served:
        poll(  # until both workers answer (each names its request IDs its own way)
            lambda: {answering(httpx.get(f"{served.url}/healthz")) for _ in range(8)},
            lambda seen: len(seen) == 2,
            seconds=60,
        )
        yield served


def test_a_cursor_is_honoured_by_the_other_worker(workers: Any) -> None:
    """Each write answered by one worker; reads with its cursor, each on a connection of its
    own, until the other worker has answered one: every read shows the write."""
    url = f"{workers.url}/graphql"

    def read_with(cursor: str | None) -> httpx.Response:
        headers = {"almanac-min-change": cursor} if cursor else {}
        return httpx.post(url, json={"query": READ}, headers=headers, timeout=30)

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(read_with, [None] * 16))  # both workers keep the answer
        for n in range(5):
            text = f"Described through one worker ({n})"
            written = httpx.post(
                url,
                json={"query": DESCRIBE, "variables": {"text": text}},
                headers={"Authorization": f"Bearer {workers.key}"},
                timeout=30,
            )
            cursor = written.headers["almanac-change-cursor"]
            assert written.json()["extensions"]["changeCursor"] == cursor
            others = 0
            for _ in range(20):
                reads = list(pool.map(read_with, [cursor] * 8))
                assert {r.json()["data"]["benchmark"]["description"] for r in reads} == {text}
                others += sum(answering(r) != answering(written) for r in reads)
                if others:
                    break
            assert others, "the other worker answered none of the reads"
