"""The app's services, made once per app (server.app) and handed to what needs each: the store
requests read, what every GraphQL request shares, the request log, the metrics and tracing."""

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from opentelemetry.sdk.trace import TracerProvider
from redis.asyncio import Redis

from request_limits import Budgets, LocalBudgets, LocalSlots, RedisBudgets, RedisSlots, Slots
from schema import Services
from server.graphql import (
    LocalDocuments,
    PersistedQueries,
    RedisDocuments,
    SharedServices,
    load_trusted_documents,
)
from server.observability import (
    BUDGET_FAILURES,
    SHARED_BUDGETS_REACHABLE,
    Observer,
    Operations,
    RequestLog,
    RequestMetrics,
    SampledGauges,
    otlp_tracer_provider,
    timed_store,
    traced_store,
)
from server.settings import Settings
from store import Store, connect
from webhooks import destinations_of

# The site's own documents, whose operations the metrics name (in a checkout; see
# server.observability.metrics).
CONTRACT = Path(__file__).parents[1] / "contract"


@dataclass(frozen=True)
class AppServices:
    """Every per-app object, typed: what the routes, the middleware and the lifespan are given.
    `opened`: the store as opened (`shared.store` is it wrapped for the observers);
    `owns_store` and `owns_tracing`: made here, so closed (or shut down) with the app."""

    settings: Settings
    shared: SharedServices
    opened: Store
    owns_store: bool
    request_log: RequestLog | None
    request_metrics: RequestMetrics | None
    sampled_gauges: SampledGauges
    tracing: TracerProvider | None
    owns_tracing: bool

    @property
    def store(self) -> Store:
        """The store requests read: the opened one, wrapped once for each observer."""
        return self.shared.store

    @property
    def observers(self) -> list[Observer]:
        """What sees each request when it ends: the request log, the metrics (as configured)."""
        observers: list[Observer] = []
        if self.request_log is not None:
            observers.append(self.request_log.observe)
        if self.request_metrics is not None:
            observers.append(self.request_metrics.observe)
        return observers


def app_services(
    settings: Settings, store: Store | None, tracer_provider: TracerProvider | None
) -> AppServices:
    """The services of an app on `store`, or else on the configured store (opened here, and
    prepared by the lifespan); spans to `tracer_provider`, by default an OTLP exporter's."""
    graphql = Services.create(
        settings.document_limits,
        document_cache_bytes=settings.document_cache_bytes,
        cost_cache_bytes=settings.cost_cache_bytes,
        answer_cache_bytes=settings.response_cache_bytes,
        webhook_destinations=destinations_of(settings),  # where createWebhook may send
    )
    budgets, documents, slots = shared_state(settings)
    persisted = PersistedQueries(documents, graphql, trusted_of(settings))
    tracing = (tracer_provider or otlp_tracer_provider()) if settings.tracing else None
    request_metrics = None
    if settings.metrics:
        request_metrics = RequestMetrics(Operations.of_site(persisted.trusted, CONTRACT))
    sampled_gauges = SampledGauges()
    # Opened last: a refused setting above leaves no store open.
    opened = store if store is not None else open_configured(settings)
    observed = opened
    if settings.metrics:
        observed = timed_store(observed)
        sampled_gauges.watch_data_version(observed)
        answers = graphql.answers
        sampled_gauges.watch_kept_answers(lambda: answers.bytes_held if answers is not None else 0)
    if tracing is not None:
        observed = traced_store(observed, tracing)
    return AppServices(
        settings=settings,
        shared=SharedServices(observed, graphql, budgets, persisted, slots),
        opened=opened,
        owns_store=store is None,
        request_log=RequestLog.configured(settings),
        request_metrics=request_metrics,
        sampled_gauges=sampled_gauges,
        tracing=tracing,
        owns_tracing=tracing is not None and tracer_provider is None,
    )


def shared_state(settings: Settings) -> tuple[Budgets, LocalDocuments | RedisDocuments, Slots]:
    """Budgets, registered documents and subscriptions' slots: in this process, or in Redis
    (shared by every process) when ALMANAC_REDIS_URL is set."""
    if settings.redis_url is None:
        return (
            LocalBudgets(settings.budget_buckets),
            LocalDocuments(settings.persisted_query_cache_bytes),
            LocalSlots(),
        )
    redis = Redis.from_url(settings.redis_url)
    budgets = RedisBudgets(
        redis,
        settings.redis_key_prefix,
        on_failure=BUDGET_FAILURES.inc,
        on_reachable=SHARED_BUDGETS_REACHABLE.set,
        max_buckets=settings.budget_buckets,
    )
    documents = RedisDocuments(
        redis, settings.redis_key_prefix, settings.persisted_query_cache_bytes
    )
    return budgets, documents, RedisSlots(redis, settings.redis_key_prefix)


def trusted_of(settings: Settings) -> dict[str, str] | None:
    """The trusted documents' manifest, if one is configured."""
    if settings.trusted_documents is None:
        return None
    return load_trusted_documents(settings.trusted_documents)


def open_configured(settings: Settings) -> Store:
    """The configured store: the MongoDB at ALMANAC_MONGODB_URI, or else the embedded one in
    ALMANAC_DATA_DIR (its indexes, seed and admin key made by the lifespan)."""
    return connect(
        settings.mongodb_uri,
        settings.mongodb_database,
        settings.data_dir,
        timeout_seconds=settings.mongodb_timeout_seconds,
        retention=timedelta(days=settings.change_retention_days),
    )
