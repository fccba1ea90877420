"""Answers refreshed ahead of their readers, and bounded staleness: a reader may get the answer a
change retired, marked stale, for at most ALMANAC_MAX_STALENESS_SECONDS past the change, never
below the change it asked for; the answer is computed again in the background, and a refresh
that fails keeps nothing. The staleness clock is the test's (no sleeps)."""

import asyncio
import json
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from prometheus_client import REGISTRY

from server.api_keys import create_key
from server.app import AlmanacApp, create_app
from server.graphql import AlmanacGraphQL
from server.graphql.refresh import Refresher
from server.settings import Settings
from store import Store, encode_change_cursor
from tests.conftest import GraphQLClient, http_client
from tests.http.reads.test_contract import GENERAL

DESCRIBED = {"query": f"{{ benchmark(slug: {json.dumps(GENERAL)}) {{ description }} }}"}
UPDATE = """mutation($slug: String!, $input: BenchmarkInput!) {
  updateBenchmark(slug: $slug, input: $input) { revision } }"""


class Clock:
    """The staleness clock, moved by the test."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def settings() -> Settings:
    return Settings(max_staleness_seconds=2)


@pytest.fixture
def clock(app: AlmanacApp) -> Clock:
    clock = Clock()
    app.services.shared.graphql.staleness.clock = clock
    return clock


def refreshes(outcome: str) -> float:
    """Refreshes done with this outcome (almanac_refreshes_total), in this process."""
    return REGISTRY.get_sample_value("almanac_refreshes_total", {"outcome": outcome}) or 0.0


def refresher_of(app: AlmanacApp) -> Refresher:
    endpoints = {getattr(route, "endpoint", None) for route in app.routes}
    views = {endpoint for endpoint in endpoints if isinstance(endpoint, AlmanacGraphQL)}
    [view] = views  # one view, routed for HTTP and WebSockets
    return view.refresher


async def described(client: httpx.AsyncClient, method: str = "POST") -> httpx.Response:
    if method == "GET":
        response = await client.get("/graphql", params=DESCRIBED)
    else:
        response = await client.post("/graphql", json=DESCRIBED)
    assert response.status_code == 200, response.text
    assert "errors" not in response.json(), response.text
    return response


def description(response: httpx.Response) -> str:
    text: str = response.json()["data"]["benchmark"]["description"]
    return text


def freshness(response: httpx.Response) -> dict[str, Any]:
    report: dict[str, Any] = response.json()["extensions"]["freshness"]
    return report


async def describe(admin: GraphQLClient, text: str) -> None:
    await admin.data(UPDATE, slug=GENERAL, input={"description": text})


async def test_a_stale_answer_is_served_within_the_bound_and_marked(
    client: httpx.AsyncClient, admin: GraphQLClient, store: Store, clock: Clock
) -> None:
    first = await described(client)
    before = store.version.applied_through
    assert freshness(first) == {"cursor": encode_change_cursor(before), "stale": False}
    assert "age" not in first.headers

    await describe(admin, "Read again in December.")
    assert store.version.applied_through > before
    assert (await described(client)).headers["age"] == "1"  # stale, if by less than a second
    clock.now += 0.25
    stale = await described(client)
    assert description(stale) == description(first)  # the answer the change retired
    assert freshness(stale) == {"cursor": encode_change_cursor(before), "stale": True, "age": 0.25}
    assert stale.headers["age"] == "1"  # whole seconds, rounded up
    clock.now += 1.25
    assert (await described(client)).headers["age"] == "2"
    clock.now += 0.5  # exactly the bound past the change: still served
    assert freshness(await described(client))["age"] == 2.0
    clock.now += 0.001  # past it: the reader waits for the new answer
    fresh = await described(client)
    assert description(fresh) == "Read again in December."
    now = encode_change_cursor(store.version.applied_through)
    assert freshness(fresh) == {"cursor": now, "stale": False}
    assert "age" not in fresh.headers


async def test_the_bound_counts_from_the_first_change_missed(
    client: httpx.AsyncClient, admin: GraphQLClient, clock: Clock
) -> None:
    first = await described(client)
    await describe(admin, "One.")
    clock.now += 1
    await describe(admin, "Two.")  # a second change does not restart the answer's clock
    clock.now += 1
    assert description(await described(client)) == description(first)
    clock.now += 0.001
    assert description(await described(client)) == "Two."


async def test_an_answer_whose_reads_changed_while_computed_is_stale_from_its_start(
    client: httpx.AsyncClient,
    admin: GraphQLClient,
    store: Store,
    clock: Clock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    read = store.benchmark_with_neighbourhood

    async def written_meanwhile(*args: Any, **kwargs: Any) -> Any:
        found = await read(*args, **kwargs)
        monkeypatch.setattr(store, "benchmark_with_neighbourhood", read)
        clock.now += 0.5  # the computation began before this write
        await describe(admin, "Read again in December.")
        return found

    monkeypatch.setattr(store, "benchmark_with_neighbourhood", written_meanwhile)
    first = await described(client)
    clock.now += 1.5  # the bound past its computation's start
    again = await described(client)
    assert description(again) == description(first)
    assert freshness(again)["stale"] is True
    assert freshness(again)["age"] == 2.0
    clock.now += 0.001
    assert description(await described(client)) == "Read again in December."


async def test_a_get_says_stale_while_revalidate_and_a_stale_one_its_age(
    client: httpx.AsyncClient, admin: GraphQLClient, clock: Clock
) -> None:
    first = await described(client, "GET")
    assert first.headers["cache-control"] == "public, max-age=0, stale-while-revalidate=2"
    etag = first.headers["etag"]
    await describe(admin, "Read again in December.")
    clock.now += 0.5
    held = await client.get("/graphql", params=DESCRIBED, headers={"If-None-Match": etag})
    assert held.status_code == 304  # what the client holds is what a reader may get still
    assert held.headers["age"] == "1"
    assert held.headers["cache-control"] == "public, max-age=0, stale-while-revalidate=2"
    clock.now += 2
    assert description(await described(client, "GET")) == "Read again in December."


async def test_no_stale_answer_while_changes_cannot_be_followed(
    client: httpx.AsyncClient, admin: GraphQLClient, store: Store, clock: Clock
) -> None:
    first = await described(client)
    await describe(admin, "Read again in December.")
    assert description(await described(client)) == description(first)
    store.version.known = False  # what changed since is not known: nothing is reused
    fresh = await described(client)
    assert description(fresh) == "Read again in December."
    assert freshness(fresh)["stale"] is False


async def test_no_stale_answer_with_a_bound_of_zero(
    store: Store, clock: Clock, admin: GraphQLClient
) -> None:
    app = create_app(Settings(max_staleness_seconds=0), store)
    app.services.shared.graphql.staleness.clock = clock  # not moved: stale for 0 seconds
    async with http_client(app) as other:
        first = await described(other, "GET")
        assert first.headers["cache-control"] == "public, max-age=0, must-revalidate"
        await describe(admin, "Read again in December.")
        fresh = await described(other)
        assert description(fresh) == "Read again in December."
        assert freshness(fresh)["stale"] is False
    await app.services.shared.budgets.close()


async def described_after(client: httpx.AsyncClient, change: int) -> httpx.Response:
    """The answer to a request asking for at least `change` (`Almanac-Min-Change`)."""
    cursor = encode_change_cursor(change)
    response = await client.post("/graphql", json=DESCRIBED, headers={"almanac-min-change": cursor})
    assert response.status_code == 200, response.text
    return response


async def test_a_stale_answer_below_the_change_asked_for_is_not_served(
    client: httpx.AsyncClient, admin: GraphQLClient, store: Store, clock: Clock
) -> None:
    first = await described(client)
    reflected = store.version.applied_through
    await describe(admin, "Read again in December.")
    written = store.version.applied_through
    stale = await described_after(client, reflected)  # it reflects that much: stale is enough
    assert (description(stale), freshness(stale)["stale"]) == (description(first), True)
    fresh = await described_after(client, reflected + 1)
    assert description(fresh) == "Read again in December."
    assert freshness(fresh) == {"cursor": encode_change_cursor(written), "stale": False}
    await describe(admin, "Read again in January.")  # another change, not asked for
    assert freshness(await described_after(client, written))["stale"] is True


async def test_a_write_elsewhere_leaves_answers_fresh_and_nothing_to_refresh(
    client: httpx.AsyncClient,
    admin: GraphQLClient,
    app: AlmanacApp,
    store: Store,
    calls: Counter[str],
) -> None:
    await admin.data(
        'mutation { createCategory(input: {slug: "elsewhere", name: "Elsewhere"}) { slug } }'
    )
    await admin.data(
        """mutation { createBenchmark(slug: "far-bench", input: {name: "Far Bench",
             metric: {name: "Accuracy", unit: PERCENT}, category: "elsewhere"}) { slug } }"""
    )
    await described(client)
    await admin.data(UPDATE, slug="far-bench", input={"description": "Elsewhere."})
    before = sum(calls.values())
    kept = await described(client)
    assert sum(calls.values()) == before  # kept, not computed again
    # Nothing it read changed: it reflects every change applied, the one elsewhere too.
    now = encode_change_cursor(store.version.applied_through)
    assert freshness(kept) == {"cursor": now, "stale": False}
    assert len(app.services.shared.graphql.staleness) == 0


@pytest.fixture
async def served(app: AlmanacApp) -> AsyncIterator[httpx.AsyncClient]:
    """The app with its life (its refresher running), and a client."""
    async with app.router.lifespan_context(app), http_client(app) as client:
        yield client


async def test_a_retired_answer_is_computed_before_its_readers_ask(
    served: httpx.AsyncClient, app: AlmanacApp, calls: Counter[str], clock: Clock
) -> None:
    admin = GraphQLClient(served).with_key(await admin_key(app))
    await described(served)
    done = refreshes("refreshed")
    await describe(admin, "Read again in December.")
    async with asyncio.timeout(60):  # a guard
        await refresher_of(app).settled()
    assert refreshes("refreshed") == done + 1
    before = sum(calls.values())
    refreshed = await described(served)
    assert sum(calls.values()) == before  # the refresh computed it: this reader did not
    assert description(refreshed) == "Read again in December."
    assert freshness(refreshed)["stale"] is False


async def test_a_failing_refresh_keeps_nothing(
    served: httpx.AsyncClient,
    app: AlmanacApp,
    store: Store,
    clock: Clock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    admin = GraphQLClient(served).with_key(await admin_key(app))
    first = await described(served)
    read = store.benchmark_with_neighbourhood

    async def failing(*args: Any, **kwargs: Any) -> Any:
        raise ConnectionError("database unreachable")

    monkeypatch.setattr(store, "benchmark_with_neighbourhood", failing)
    failed = refreshes("failed")
    await describe(admin, "Read again in December.")
    async with asyncio.timeout(60):  # a guard
        await refresher_of(app).settled()
    assert refreshes("failed") == failed + 1
    stale = await described(served)  # the old answer, until the bound
    assert description(stale) == description(first)
    assert freshness(stale)["stale"] is True
    monkeypatch.setattr(store, "benchmark_with_neighbourhood", read)
    clock.now += 2.001  # past it: computed by the reader, not a failure kept
    assert description(await described(served)) == "Read again in December."


async def test_refreshes_stop_at_shutdown(
    app: AlmanacApp, store: Store, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    read = store.benchmark_with_neighbourhood
    started, never, cancelled = asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def held(*args: Any, **kwargs: Any) -> Any:
        started.set()
        try:
            await never.wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return await read(*args, **kwargs)

    async with app.router.lifespan_context(app), http_client(app) as client:
        admin = GraphQLClient(client).with_key(await admin_key(app))
        await described(client)
        monkeypatch.setattr(store, "benchmark_with_neighbourhood", held)
        await describe(admin, "Read again in December.")
        async with asyncio.timeout(60):  # a guard, should it never start
            await started.wait()  # a refresh is running
    assert cancelled.is_set()
    refresher = refresher_of(app)
    assert refresher.running == 0
    queued = len(refresher.staleness)
    store.version.bump(None)  # a change after shutdown: this app no longer watches the store
    assert len(refresher.staleness) == queued


async def admin_key(app: AlmanacApp) -> str:
    return await create_key(app.services.opened, "editor", "admin")
