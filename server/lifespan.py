"""The app's life: at start-up the store is made ready (a store it opened: its indexes, its
seed, its admin key), the background tasks start (following the change log, placing leaders,
the webhook worker, refreshing kept answers ahead of their readers, the metrics' and the request
log's periodic writes) and the drain is put in front of SIGTERM; at shutdown each stops, in
order, and what the app opened is closed."""

import asyncio
import gc
import logging
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager

from prometheus_client import start_http_server

from editing import counted, ensure_seeded, place_missing_leaders
from server.api_keys import ADMIN_KEY_FILE, EMBEDDED_ADMIN_KEY_NAME, kept_key
from server.observability import FLUSH_SECONDS, FOLD_SECONDS, metrics_shared, registry
from server.services import AppServices, open_configured
from server.settings import Settings
from server.transport import Drain
from store import Store, prepare
from webhooks import DeliveryPolicy, DeliveryWorker

log = logging.getLogger("almanac")

DRAIN_WATCH_SECONDS = 0.25


class Lifespan:
    """Starlette's `lifespan`: what runs beside the app's requests, from start-up to shutdown.
    `close_subscriptions` ends the open subscriptions (completed: their clients reconnect),
    when the drain begins and at shutdown; `refresh` refreshes kept answers ahead of their
    readers until it is cancelled (server.graphql.refresh), at shutdown first."""

    def __init__(
        self,
        services: AppServices,
        drain: Drain,
        close_subscriptions: Callable[[], None],
        refresh: Callable[[], Coroutine[None, None, None]],
    ) -> None:
        self.services = services
        self.drain = drain
        self.close_subscriptions = close_subscriptions
        self.refresh = refresh

    @asynccontextmanager
    async def __call__(self, app: object) -> AsyncIterator[None]:
        services, settings = self.services, self.services.settings
        remove_drain = self.drain.install()
        if services.owns_store:
            await made_ready(services.opened, settings)
        # With several workers, the command that runs them serves the port (server.cli).
        if settings.metrics and settings.metrics_port is not None and not metrics_shared():
            start_http_server(settings.metrics_port, registry=registry())
        store = services.store
        tasks = [
            asyncio.create_task(store.follow_changes()),
            asyncio.create_task(leaders_placed(store)),
        ]
        refreshing = asyncio.create_task(self.refresh())
        writers = [asyncio.create_task(every(seconds, work)) for seconds, work in self.periodic()]
        worker = DeliveryWorker(store, DeliveryPolicy.of(settings)) if settings.webhooks else None
        delivering = asyncio.create_task(worker.run()) if worker is not None else None
        # What start-up made (modules, the schema, settings) lives as long as the process: out
        # of the collector's sight, a full collection takes some 15 ms instead of 75.
        gc.collect()
        gc.freeze()
        closing = asyncio.create_task(self.close_when_draining())
        yield
        remove_drain()
        closing.cancel()
        refreshing.cancel()  # refreshes in flight end (nothing kept), none starts again
        await asyncio.gather(refreshing, return_exceptions=True)
        self.close_subscriptions()
        if worker is not None and delivering is not None:
            # The delivery in flight ends (within its timeout), then the leases are given back.
            await worker.stop()
            await delivering
            await worker.close()
        for task in [*tasks, *writers]:
            task.cancel()
        await asyncio.gather(*writers, return_exceptions=True)  # each writes what waits
        await self.closed()

    def periodic(self) -> list[tuple[float, Callable[[], None]]]:
        """What is written every few seconds while the app runs (and once more at its end)."""
        services = self.services
        writes: list[tuple[float, Callable[[], None]]] = []
        if services.request_metrics is not None:
            writes.append((FOLD_SECONDS, services.request_metrics.fold))
            writes.append((FOLD_SECONDS, services.sampled_gauges.sample))
        if services.request_log is not None:
            writes.append((FLUSH_SECONDS, services.request_log.flush))
        return writes

    async def close_when_draining(self) -> None:
        """Subscriptions end, completed, when the drain begins: their clients reconnect (with
        their last cursor) to a process that stays."""
        while not self.drain.started:  # noqa: ASYNC110 (a flag its signal handler sets)
            await asyncio.sleep(DRAIN_WATCH_SECONDS)
        self.close_subscriptions()

    async def closed(self) -> None:
        """What the app made is let go: the budgets' connection, the store it opened, the
        tracer it made (which sends the spans still batched)."""
        services = self.services
        await services.shared.budgets.close()
        if services.owns_store:
            await services.opened.close()
        if services.tracing is not None and services.owns_tracing:
            services.tracing.shutdown()


async def open_store(settings: Settings) -> Store:
    """The configured store, opened and made ready as the app's start-up makes it."""
    opened = open_configured(settings)
    await made_ready(opened, settings)
    return opened


async def made_ready(opened: Store, settings: Settings) -> None:
    """The configured store, with its indexes; a new embedded one seeded and given a key."""
    await prepare(opened)
    if summary := await ensure_seeded(opened):
        log.info("Loaded the bundled dataset: %s", summary.describe())
    if not opened.embedded:
        log.info(
            "Benchmark Almanac API on MongoDB database '%s': %s",
            settings.mongodb_database,
            await benchmark_count(opened),
        )
        return
    # Every clone of this user shares the default directory: say which one this is.
    log.info(
        "Benchmark Almanac API on the embedded store in %s (ALMANAC_DATA_DIR; no "
        "ALMANAC_MONGODB_URI set): %s",
        settings.data_dir,
        await benchmark_count(opened),
    )
    kept = settings.data_dir / ADMIN_KEY_FILE
    async with opened.seed_lock():  # workers starting at once make one key, not one each
        key, made = await kept_key(opened, kept, EMBEDDED_ADMIN_KEY_NAME, "admin")
    if made:  # Shown this once: every line logged may end up in a log shipper's store.
        log.warning("Admin API key made, kept in %s (`almanac admin-key` shows it): %s", kept, key)
    else:
        log.info("Admin API key kept in %s (`almanac admin-key` shows it)", kept)


async def benchmark_count(opened: Store) -> str:
    count = sum(category["benchmark_count"] for category in await opened.categories())
    return counted(count, "benchmark")


async def leaders_placed(store: Store) -> None:
    """The leaders of benchmarks written before they were stored, stored once, after start-up
    (editing.place_missing_leaders): until then those rows read their whole leaderboards, as
    before. Every process tries: one that comes second finds them stored, and changes nothing."""
    try:
        placed = await place_missing_leaders(store)
    except Exception:  # the API serves without them, only slower: it says so, and goes on
        log.exception("Could not store the leaders of benchmarks written before they were kept")
        return
    if placed:
        log.info("Stored the leaders of %d benchmarks written before they were kept.", placed)


async def every(seconds: float, work: Callable[[], None]) -> None:
    """`work` every `seconds` until cancelled, and once more then."""
    try:
        while True:
            await asyncio.sleep(seconds)
            work()
    finally:
        work()
