"""The store's calls are watched through a wrapper each app makes (store.views): timed
where metrics are on, traced where tracing is on, and the store itself is left as it is, so
another app (or the CLI) sharing it is not watched."""

from collections import Counter
from contextlib import AbstractContextManager, nullcontext

import httpx
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from server.app import AlmanacApp, create_app
from server.settings import Settings
from store import Collection, Store, Watch, noting_reads, underlying, watched
from tests.conftest import ROUND_TRIPS, http_client
from tests.server.observability.test_metrics import scrape, value
from tests.server.observability.test_tracing import QUERY, provider_of

PAGE = {"query": QUERY, "variables": {"slug": "code-interpreter-benchmark-general"}}
TIMED_CALL = ("almanac_store_seconds_count", "benchmark_with_neighbourhood")


async def store_calls_timed(http: httpx.AsyncClient) -> float:
    name, method = TIMED_CALL
    return value(await scrape(http), name, method=method)


async def ask(app: AlmanacApp) -> None:
    async with http_client(app) as http:
        response = await http.post("/graphql", json=PAGE)
    assert response.json()["data"]["benchmark"]["name"]


def traced_calls(spans: InMemorySpanExporter) -> list[str]:
    return [span.name for span in spans.get_finished_spans() if span.name.startswith("store.")]


async def test_an_app_without_metrics_or_tracing_reads_the_plain_store(store: Store) -> None:
    timed = create_app(Settings(), store)
    plain = create_app(Settings(metrics=False, tracing=False), store)
    assert plain.services.store is store
    async with http_client(timed) as scraper:
        before = await store_calls_timed(scraper)
        await ask(plain)  # the store timed by the other app is not timed here
        assert await store_calls_timed(scraper) == before
        await ask(timed)
        assert await store_calls_timed(scraper) > before
    assert not set(vars(store)) & set(ROUND_TRIPS), "the store's own methods are not replaced"
    for app in (timed, plain):
        await app.services.shared.budgets.close()


async def test_observers_compose_per_app(store: Store) -> None:
    spans = InMemorySpanExporter()
    timed = create_app(Settings(), store)
    traced = create_app(Settings(metrics=False, tracing=True), store, provider_of(spans))
    both = create_app(Settings(tracing=True), store, provider_of(spans))
    async with http_client(timed) as scraper:
        before = await store_calls_timed(scraper)
        await ask(traced)  # traced, not timed
        assert "store.benchmark_with_neighbourhood" in traced_calls(spans)
        assert await store_calls_timed(scraper) == before
        spans.clear()
        await ask(both)
        assert "store.benchmark_with_neighbourhood" in traced_calls(spans)
        after_both = await store_calls_timed(scraper)
        assert after_both > before
        spans.clear()
        await ask(timed)  # timed, not traced
        assert traced_calls(spans) == []
        assert await store_calls_timed(scraper) > after_both
    for app in (timed, traced, both):
        await app.services.shared.budgets.close()


class Counted:
    """A timer that counts the calls it times, by method (as a histogram's count does)."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.method = ""

    def labels(self, *labelvalues: str) -> "Counted":
        counted = Counted()
        counted.counts, counted.method = self.counts, labelvalues[0]
        return counted

    def time(self) -> AbstractContextManager[object]:
        self.counts[self.method] += 1
        return nullcontext()


async def test_a_view_of_a_view_is_one_view_over_the_store_itself(store: Store) -> None:
    timer = Counted()
    timed = watched(store, Watch(timer=timer))
    read: set[str] = set()
    noted = noting_reads(timed, read)
    assert [underlying(view) for view in (noted, timed, store)] == [store] * 3
    assert noted.version is store.version
    await noted.benchmarks_by_slugs(["no-such-benchmark"])
    await noted.replace(Collection.SITE, {"_id": "view"}, {"seen": True})  # a write: not noted
    assert read == {"benchmark:no-such-benchmark"}
    assert [batch async for batch in noted.documents_in_batches(Collection.LABS, 1000)]
    assert "*" in read  # a read without a rule depends on everything
    read.clear()
    assert [
        batch async for batch in noting_reads(store, read).documents_in_batches(Collection.LABS, 9)
    ]
    assert read == {"*"}  # noted without a watch too
    assert timer.counts == {"benchmarks_by_slugs": 1, "replace": 1, "documents_in_batches": 2}
