"""What the server tells its operators: a request id and one log line a request, the request
log, Prometheus metrics (of every worker), and OpenTelemetry traces."""

from server.observability.logs import Observer, RequestIds, log_config, printable
from server.observability.metrics import (
    BUDGET_FAILURES,
    COST,
    EXECUTED,
    FOLD_SECONDS,
    KEPT_HIT,
    KEPT_MISS,
    MIN_CHANGE_WAIT_SECONDS,
    MIN_CHANGE_WAITS,
    PERSISTED_QUERIES,
    SHARED_BUDGETS_REACHABLE,
    THROTTLED,
    MetricsEndpoint,
    Operations,
    RequestMetrics,
    SampledGauges,
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
from server.observability.worker_metrics import metrics_shared, shared_by_workers

__all__ = [
    "BUDGET_FAILURES",
    "COST",
    "EXECUTED",
    "FLUSH_SECONDS",
    "FOLD_SECONDS",
    "KEPT_HIT",
    "KEPT_MISS",
    "MIN_CHANGE_WAITS",
    "MIN_CHANGE_WAIT_SECONDS",
    "PERSISTED_QUERIES",
    "SHARED_BUDGETS_REACHABLE",
    "THROTTLED",
    "MetricsEndpoint",
    "Observer",
    "Operations",
    "RequestIds",
    "RequestLog",
    "RequestMetrics",
    "SampledGauges",
    "log_config",
    "metrics_shared",
    "operation_tracing",
    "otlp_tracer_provider",
    "printable",
    "registry",
    "request_tracing",
    "shared_by_workers",
    "timed_store",
    "traced_store",
]
