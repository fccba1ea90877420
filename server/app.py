"""The Starlette application: routes, middleware, GraphiQL's files, health checks, and the
life of the store and of the shared services (budgets, persisted queries, subscriptions' slots)."""

import asyncio
import gc
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path

from opentelemetry.sdk.trace import TracerProvider
from prometheus_client import start_http_server
from redis.asyncio import Redis
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute, request_response
from starlette.types import Receive, Scope, Send

from api_errors import INTERNAL_ERROR_MESSAGE
from editing import counted, ensure_seeded, place_missing_leaders
from request_limits import Budgets, LocalBudgets, RedisBudgets
from schema import Services, almanac_schema
from server.api_keys import ADMIN_KEY_FILE, EMBEDDED_ADMIN_KEY_NAME, kept_key
from server.charges import Charges
from server.errors import http_error
from server.graphql.graphiql import asset_endpoint
from server.graphql.persisted import (
    LocalDocuments,
    PersistedQueries,
    RedisDocuments,
    load_trusted_documents,
)
from server.graphql.published_schema import published_schema
from server.graphql.subscriptions.slots import LocalSlots, RedisSlots, Slots
from server.graphql.view import AlmanacGraphQL
from server.observability.logs import Observer, RequestIds
from server.observability.metrics import (
    BUDGET_FAILURES,
    FOLD_SECONDS,
    SHARED_BUDGETS_REACHABLE,
    Operations,
    RequestMetrics,
    SampledGauges,
    metrics,
    registry,
    timed_store,
)
from server.observability.request_log import FLUSH_SECONDS, RequestLog
from server.observability.tracing import (
    operation_tracing,
    otlp_tracer_provider,
    request_tracing,
    traced_store,
)
from server.observability.worker_metrics import metrics_shared
from server.resources.downloads import Downloads
from server.resources.feeds import Feeds
from server.resources.front_door import favicon, front_door, guide
from server.resources.releases import Releases
from server.services import SharedServices
from server.settings import Settings
from server.transport.shutdown import Drain
from server.webhooks import DeliveryPolicy, DeliveryWorker, destinations_of
from store import Store, connect, prepare

log = logging.getLogger("almanac")

READY_TIMEOUT_SECONDS = 2.0
DRAIN_WATCH_SECONDS = 0.25
# The site's own documents, whose operations the metrics name (in a checkout; see
# server.observability.metrics).
CONTRACT = Path(__file__).parents[1] / "contract"


def create_app(
    settings: Settings, store: Store | None = None, tracer_provider: TracerProvider | None = None
) -> Starlette:
    """The app. Without a `store`, it opens (and prepares) the configured one at start-up.
    With tracing on, spans go to `tracer_provider`, by default an OTLP exporter's."""

    services = shared_services(settings)
    tracing = (tracer_provider or otlp_tracer_provider()) if settings.tracing else None
    downloads = Downloads(Charges(settings, services.budgets), services.graphql)
    feeds = Feeds(downloads)
    releases = Releases(downloads)
    request_log = RequestLog.configured(settings)
    observers: list[Observer] = [request_log.observe] if request_log is not None else []
    request_metrics = None
    sampled_gauges = SampledGauges()
    if settings.metrics:
        request_metrics = RequestMetrics(Operations.of_site(services.persisted.trusted, CONTRACT))
        observers.append(request_metrics.observe)

    def observed(opened: Store) -> Store:
        """The store the app reads through: `opened`, wrapped once for each observer (none
        with metrics and tracing off); `opened` itself, which the CLI and tests may share, is
        left as it is."""
        if settings.metrics:
            opened = timed_store(opened)
            sampled_gauges.watch_data_version(opened)
            answers = services.graphql.answers
            sampled_gauges.watch_kept_answers(
                lambda: answers.bytes_held if answers is not None else 0
            )
        if tracing is not None:
            opened = traced_store(opened, tracing)
        return opened

    drain = Drain(settings.shutdown_drain_seconds)
    view = graphql_view(settings, services, tracing)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        remove_drain = drain.install()
        if store is None:
            app.state.store = observed(await open_store(settings))
        opened: Store = app.state.store
        # With several workers, the command that runs them serves the port (server.cli).
        if settings.metrics and settings.metrics_port is not None and not metrics_shared():
            start_http_server(settings.metrics_port, registry=registry())
        following = asyncio.create_task(opened.follow_changes())
        placing = asyncio.create_task(leaders_placed(opened))
        periodic = (
            [every(FOLD_SECONDS, request_metrics.fold), every(FOLD_SECONDS, sampled_gauges.sample)]
            if request_metrics
            else []
        )
        worker = DeliveryWorker(opened, DeliveryPolicy.of(settings)) if settings.webhooks else None
        delivering = asyncio.create_task(worker.run()) if worker is not None else None
        if request_log is not None:
            periodic.append(every(FLUSH_SECONDS, request_log.flush))
        writers = [asyncio.create_task(work) for work in periodic]
        closing = asyncio.create_task(close_when_draining(drain, view))
        # What start-up made (modules, the schema, settings) lives as long as the process: out
        # of the collector's sight, a full collection takes some 15 ms instead of 75.
        gc.collect()
        gc.freeze()
        yield
        remove_drain()
        closing.cancel()
        view.subscriptions.close_all()
        if worker is not None and delivering is not None:
            # The delivery in flight ends (within its timeout), then the leases are given back.
            await worker.stop()
            await delivering
            await worker.close()
        following.cancel()
        placing.cancel()
        for writer in writers:
            writer.cancel()
        await asyncio.gather(*writers, return_exceptions=True)  # each writes what waits
        await services.budgets.close()
        if store is None:
            await opened.close()
        if tracing is not None and tracer_provider is None:
            tracing.shutdown()  # sends the spans still batched

    app = Starlette(
        exception_handlers={HTTPException: refusal, Exception: internal_error},
        routes=[
            Route("/graphql", view, methods=["GET", "POST"]),
            WebSocketRoute("/graphql", view),  # subscriptions over graphql-transport-ws
            Route("/", front_door),
            Route("/docs/{name}.md", guide),
            Route("/favicon.ico", favicon),
            Route("/schema.graphql", published_schema),
            Route("/changes.atom", feeds.changes),
            Route("/benchmarks/{slug}.atom", feeds.benchmark),  # before the other formats
            Route("/benchmarks/{slug}.{format}", downloads.leaderboard),
            Route("/models/{slug}.csv", downloads.standings),
            Route("/export.ndjson", downloads.export),
            Route("/releases/{release_id}/{name:path}", releases.file),
            Route(
                "/graphiql/{name}",
                GZipMiddleware(request_response(asset_endpoint(settings.graphiql_packages))),
            ),
            Route("/healthz", healthz),
            Route("/readyz", readyz),
            *(
                [Route("/metrics", metrics)]
                if settings.metrics and not settings.metrics_port
                else []
            ),
        ],
        middleware=[
            *([request_tracing(tracing)] if tracing is not None else []),
            Middleware(RequestIds, observers=observers),
            *cors(settings),
        ],
        lifespan=lifespan,
    )
    app.state.store = observed(store) if store is not None else None
    app.state.services = services
    app.state.drain = drain
    app.state.webhook_destinations = destinations_of(settings)  # read by createWebhook
    app.state.request_log = request_log
    app.state.request_metrics = request_metrics
    app.state.sampled_gauges = sampled_gauges
    return app


def graphql_view(
    settings: Settings, services: SharedServices, tracing: TracerProvider | None
) -> AlmanacGraphQL:
    if tracing is None:
        return AlmanacGraphQL(settings, services)
    return AlmanacGraphQL(settings, services, almanac_schema(operation_tracing(tracing)))


async def close_when_draining(drain: Drain, view: AlmanacGraphQL) -> None:
    """Subscriptions end, completed, when the drain begins: their clients reconnect (with
    their last cursor) to a process that stays."""
    while not drain.started:  # noqa: ASYNC110 (a flag its signal handler sets)
        await asyncio.sleep(DRAIN_WATCH_SECONDS)
    view.subscriptions.close_all()


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


def shared_services(settings: Settings) -> SharedServices:
    documents: LocalDocuments | RedisDocuments
    budgets: Budgets
    slots: Slots
    if settings.redis_url is None:
        documents = LocalDocuments(settings.persisted_query_cache_bytes)
        budgets = LocalBudgets(settings.budget_buckets)
        slots = LocalSlots()
    else:
        redis = Redis.from_url(settings.redis_url)
        documents = RedisDocuments(
            redis, settings.redis_key_prefix, settings.persisted_query_cache_bytes
        )
        budgets = RedisBudgets(
            redis,
            settings.redis_key_prefix,
            on_failure=BUDGET_FAILURES.inc,
            on_reachable=SHARED_BUDGETS_REACHABLE.set,
            max_buckets=settings.budget_buckets,
        )
        slots = RedisSlots(redis, settings.redis_key_prefix)
    trusted = trusted_of(settings)
    graphql = Services.create(
        settings.document_limits,
        document_cache_bytes=settings.document_cache_bytes,
        cost_cache_bytes=settings.cost_cache_bytes,
        answer_cache_bytes=settings.response_cache_bytes,
    )
    return SharedServices(
        graphql, budgets, PersistedQueries(documents, settings.document_limits, trusted), slots
    )


def trusted_of(settings: Settings) -> dict[str, str] | None:
    """The trusted documents' manifest, if one is configured."""
    if settings.trusted_documents is None:
        return None
    return load_trusted_documents(settings.trusted_documents)


def cors(settings: Settings) -> list[Middleware]:
    """Browsers may call the API from the configured origins only (none by default). With
    none, the middleware still answers a preflight: a refusal that names CORS, not a 405."""
    return [
        Middleware(
            GraphQLShapedCORSMiddleware,
            allow_origins=settings.cors_origins,
            allow_origin_regex=settings.cors_origin_regex,
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type", "If-None-Match"],
            expose_headers=[
                "ETag",
                "Retry-After",
                "RateLimit-Limit",
                "RateLimit-Remaining",
                "RateLimit-Reset",
            ],
            max_age=600,
        )
    ]


async def open_store(settings: Settings) -> Store:
    """The configured store, with its indexes; a new embedded one seeded and given a key."""
    opened = connect(
        settings.mongodb_uri,
        settings.mongodb_database,
        settings.data_dir,
        timeout_seconds=settings.mongodb_timeout_seconds,
        retention=timedelta(days=settings.change_retention_days),
    )
    await prepare(opened)
    if summary := await ensure_seeded(opened):
        log.info("Loaded the bundled dataset: %s", summary.describe())
    if not opened.embedded:
        log.info(
            "Benchmark Almanac API on MongoDB database '%s': %s",
            settings.mongodb_database,
            await benchmark_count(opened),
        )
        return opened
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
    return opened


async def benchmark_count(opened: Store) -> str:
    count = sum(category["benchmark_count"] for category in await opened.categories())
    return counted(count, "benchmark")


def app_from_environment() -> Starlette:
    """Uvicorn's app factory: settings from ALMANAC_* variables."""
    return create_app(Settings())


async def healthz(request: Request) -> JSONResponse:
    """The process is alive and serving."""
    return JSONResponse({"status": "ok"})


async def readyz(request: Request) -> JSONResponse:
    """The database answers and the process is not shutting down; a load balancer should send
    traffic here only while both hold."""
    if request.app.state.drain.started:
        return JSONResponse(
            {"status": "unavailable", "reason": "shutting down"},
            status_code=503,
            headers={"connection": "close"},
        )
    try:
        await asyncio.wait_for(request.app.state.store.ping(), READY_TIMEOUT_SECONDS)
    except Exception as error:
        log.warning("Not ready: the database did not answer a ping: %s", error)
        return JSONResponse(
            {"status": "unavailable", "reason": "the database did not answer"}, status_code=503
        )
    return JSONResponse({"status": "ready"})


async def internal_error(request: Request, error: Exception) -> Response:
    """A failure nothing else caught: GraphQL-shaped, with no detail (Uvicorn logs it)."""
    return http_error(500, INTERNAL_ERROR_MESSAGE)


class GraphQLShapedCORSMiddleware(CORSMiddleware):
    """Starlette's CORS, with its refusal of a preflight as a GraphQL-shaped error. With no
    origin allowed (the production default) only preflights need it: every other request
    goes straight on, without the headers it would look at and a `Vary: Origin` for nothing."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        allows_any = self.allow_origins or self.allow_origin_regex is not None
        if allows_any or scope["type"] != "http" or scope["method"] == "OPTIONS":
            await super().__call__(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    def preflight_response(self, request_headers: Headers) -> Response:
        response = super().preflight_response(request_headers)
        if response.status_code != 400:
            return response
        reason = bytes(response.body).decode()
        headers = {k: v for k, v in response.headers.items() if k.lower().startswith("access-")}
        return http_error(400, f"{reason}: this API does not allow that here.", headers)


async def refusal(request: Request, error: Exception) -> Response:
    """Unknown paths and methods get a GraphQL-shaped error too, not a bare page."""
    assert isinstance(error, HTTPException)
    return http_error(error.status_code, error.detail, headers=error.headers)
