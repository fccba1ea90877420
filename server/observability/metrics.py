"""Prometheus metrics (prometheus-client), served at `/metrics`, or on a port of their own
(`ALMANAC_METRICS_PORT`), or not at all (`ALMANAC_METRICS=false`).

With several workers (`almanac serve --workers N`), prometheus-client's multiprocess mode
(server.observability.worker_metrics): each worker writes its metrics to files in one directory, and
`/metrics` sums them. So no gauge is read at scrape time (`set_function` would read only the
process scraped): each process sets its own, where its value changes or when it is sampled,
and each gauge says how the workers' values add up (`multiprocess_mode`, the `live` modes
leaving out the workers that ended).

Labels stay few: an operation is named only if it is one of the site's own documents (the
trusted documents, or `contract/`), else `other` (`anonymous` without a name, `batch` for a
batch); codes are the API's error codes (a fixed list), statuses HTTP's.
"""

import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from graphql import OperationDefinitionNode, parse
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Scope

from server.exchange import Exchange
from server.observability.worker_metrics import metrics_shared
from store import Store, Watch, watched

FOLD_REQUESTS = 256
FOLD_SECONDS = 0.25
"""How often the running server folds the requests noted (server.lifespan)."""

LATENCY = Histogram(
    "almanac_request_seconds",
    "Requests answered, and how long they took: by operation, error code and HTTP status "
    "(its `_count` counts the requests).",
    ["operation", "code", "status"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
COST = Counter("almanac_query_cost_points", "Points charged to budgets.")
THROTTLED = Counter("almanac_throttled_requests", "Requests refused for a spent budget.")
KEPT_ANSWERS = Counter(
    "almanac_kept_answers", "Lookups of kept answers: hit (reused) or miss (run).", ["result"]
)
KEPT_HIT, KEPT_MISS = KEPT_ANSWERS.labels("hit"), KEPT_ANSWERS.labels("miss")
EXECUTED = Counter(
    "almanac_operations_executed",
    "GraphQL operations run (not answered from a kept answer): under writes, how many answers "
    "each change made the API compute again.",
)
STALE_ANSWERS = Counter(
    "almanac_stale_answers",
    "Kept answers served stale: retired by a change, within ALMANAC_MAX_STALENESS_SECONDS of "
    "it, while they were computed again.",
)
STALE_ANSWER_AGE = Histogram(
    "almanac_stale_answer_age_seconds",
    "How far past the first change it misses each stale answer served was.",
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 10),
)
REFRESHES = Counter(
    "almanac_refreshes",
    "Kept answers computed again ahead of their readers after a change retired them: "
    "refreshed, failed (nothing kept), or current (a request had computed it first).",
    ["outcome"],
)
REFRESH_QUEUE = Gauge(
    "almanac_refresh_queue",
    "Retired answers waiting to be refreshed. With several workers: their sum.",
    multiprocess_mode="livesum",
)
KEPT_ANSWER_BYTES = Gauge(
    "almanac_kept_answer_bytes",
    "Memory the kept answers hold (with several workers: all of theirs).",
    multiprocess_mode="livesum",
)
STORE_SECONDS = Histogram(
    "almanac_store_seconds",
    "How long store calls took.",
    ["method"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1),
)
DATA_VERSION_AGE = Gauge(
    "almanac_data_version_age_seconds",
    "Seconds since this process last saw the data change. With several workers: the one "
    "furthest behind.",
    multiprocess_mode="livemax",
)
DATA_CHANGED = Gauge(
    "almanac_data_changed_timestamp_seconds",
    "Unix time of the last data change this process saw (0 before the first): the replicas "
    "should agree. With several workers: the latest any of them saw.",
    multiprocess_mode="livemax",
)
DATA_VERSION_KNOWN = Gauge(
    "almanac_data_version_known",
    "1 while this process follows the change log (on MongoDB: reads it), else 0: then no "
    "answer is reused. With several workers: 0 if any one does not.",
    multiprocess_mode="livemin",
)
CHANGE_LOG_RESETS = Gauge(
    "almanac_change_log_resets",
    "Times this process could not tell from the change log what changed (a gap past the "
    "retention, a change lost) and so retired every kept answer. With several workers: their "
    "sum, the ended ones' included.",
    multiprocess_mode="sum",
)
PERSISTED_QUERIES = Counter(
    "almanac_persisted_queries", "Persisted-query lookups: hit, miss or registered.", ["result"]
)
BUDGET_FAILURES = Counter(
    "almanac_budget_backend_failures",
    "Requests metered by this process's own budgets because Redis failed (fallbacks).",
)
SHARED_BUDGETS_REACHABLE = Gauge(
    "almanac_shared_budgets_reachable",
    "1 while the budgets shared in Redis answer (or no Redis is configured), 0 from a failure "
    "until Redis answers again. With several workers: 0 if any one failed.",
    multiprocess_mode="livemin",
)
SHARED_BUDGETS_REACHABLE.set(1)
MIN_CHANGE_WAITS = Counter(
    "almanac_min_change_waits",
    "Operations that had to reflect a minimum change (read-your-writes: `Almanac-Min-Change`, "
    "or the key's own last change), by outcome: applied already, waited for, timed out, or "
    "refused (a change beyond the log's newest).",
    ["outcome"],
)
MIN_CHANGE_WAIT_SECONDS = Histogram(
    "almanac_min_change_wait_seconds",
    "How long operations waited for this process to apply their minimum change (those that "
    "waited: reached or timed out).",
    buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
PROCESS_REQUESTS = Gauge(
    "almanac_process_requests",
    "Requests this process answered since it started. A gauge, so that with several workers "
    "each keeps its own series (label `pid`): how the connections are spread over them.",
    multiprocess_mode="liveall",
)


class Operations:
    """The operation names metrics name: the site's own documents'; the others are `other`."""

    def __init__(self, documents: Iterable[str]) -> None:
        self.known = {name for text in documents for name in _operation_names(text)}

    def label(self, name: str | None) -> str:
        if name is None:
            return "anonymous"
        return name if name in self.known or name == "batch" else "other"

    @classmethod
    def of_site(cls, trusted: dict[str, str] | None, contract: Path) -> "Operations":
        texts = list(trusted.values()) if trusted else []
        if contract.is_dir():
            texts += [path.read_text(encoding="utf-8") for path in contract.glob("*.graphql")]
        return cls(texts)


class RequestMetrics:
    """Each answered request counted, by operation, code and status, and timed (an observer of
    server.observability.logs.RequestIds). A request only notes its labels and time; they are
    folded into
    the histogram 256 at a time, every 0.25 s and before each scrape, which costs a request a
    third of an observation made as it ends (see server.observability.request_log: the same cache
    misses)."""

    def __init__(self, operations: Operations) -> None:
        self.operations = operations
        self.labelled: dict[tuple[str, str, int], Any] = {}
        self.pending: list[tuple[str, str, int, float]] = []

    def observe(self, scope: Scope, exchange: Exchange | None, status: int, seconds: float) -> None:
        if exchange is None:  # not a GraphQL request
            if scope["path"] == "/metrics":
                return
            operation, code = "anonymous", "none"
        else:
            operation, code = self.operations.label(exchange.operation), exchange.code or "none"
        self.pending.append((operation, code, status, seconds))
        if len(self.pending) >= FOLD_REQUESTS:
            self.fold()

    def fold(self) -> None:
        """Puts the noted requests into the histogram."""
        noted, self.pending = self.pending, []
        for operation, code, status, seconds in noted:
            self.child(operation, code, status).observe(seconds)
        if noted:
            PROCESS_REQUESTS.inc(len(noted))

    def child(self, operation: str, code: str, status: int) -> Any:
        """The histogram of these labels (prometheus-client's `labels` is a slow lookup; the
        labels are few, so each child is kept)."""
        key = (operation, code, status)
        if (found := self.labelled.get(key)) is None:
            found = self.labelled[key] = LATENCY.labels(operation, code, str(status))
        return found


def timed_store(store: Store) -> Store:
    """The store, each call a request makes timed by method."""
    return watched(store, Watch(timer=STORE_SECONDS))


class SampledGauges:
    """The gauges read from this process's own state (the data version it follows, the memory
    its kept answers hold), set when sampled: every 0.25 s while the server runs (server.lifespan)
    and before each scrape."""

    def __init__(self) -> None:
        self.readings: list[tuple[Gauge, Callable[[], float]]] = []

    def watch_data_version(self, store: Store) -> None:
        self.readings += [
            (DATA_VERSION_AGE, lambda: time.monotonic() - store.version.changed_at),
            (DATA_CHANGED, lambda: store.version.last_change or 0.0),
            (DATA_VERSION_KNOWN, lambda: float(store.version.known)),
            (CHANGE_LOG_RESETS, lambda: float(store.version.resets)),
        ]

    def watch_kept_answers(self, held: Callable[[], int]) -> None:
        self.readings.append((KEPT_ANSWER_BYTES, lambda: float(held())))

    def sample(self) -> None:
        for gauge, read in self.readings:
            gauge.set(read())


class MetricsEndpoint:
    """`/metrics`: every metric, in Prometheus' text format (of every worker, with several),
    the request metrics folded and the gauges sampled first."""

    def __init__(self, request_metrics: RequestMetrics, gauges: SampledGauges) -> None:
        self.request_metrics = request_metrics
        self.gauges = gauges

    async def endpoint(self, request: Request) -> Response:
        self.request_metrics.fold()
        self.gauges.sample()
        for _ in range(3):
            try:
                return Response(generate_latest(registry()), media_type=CONTENT_TYPE_LATEST)
            except FileNotFoundError:  # an ended worker's gauge file, removed while it was read
                continue
        return Response(generate_latest(registry()), media_type=CONTENT_TYPE_LATEST)


def registry() -> CollectorRegistry:
    """This process's metrics; with several workers, all of theirs, read from their files."""
    if not metrics_shared():
        return REGISTRY
    collected = CollectorRegistry()
    multiprocess.MultiProcessCollector(collected)  # type: ignore[no-untyped-call]
    return collected


def _operation_names(text: str) -> list[str]:
    return [
        definition.name.value
        for definition in parse(text).definitions
        if isinstance(definition, OperationDefinitionNode) and definition.name is not None
    ]
