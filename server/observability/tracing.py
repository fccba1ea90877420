"""OpenTelemetry traces (`ALMANAC_TRACING=true`; off by default): a span for each HTTP request
(OpenTelemetry's ASGI middleware, the one Starlette's instrumentation installs), for each
GraphQL operation and each resolver (Strawberry's extension), and for each store call, exported
by OTLP over HTTP to the collector the standard `OTEL_EXPORTER_OTLP_*` variables name. The
service is `OTEL_SERVICE_NAME`, by default `benchmark-almanac`. The request's log line carries
its trace ID."""

import logging
import os
from collections.abc import Sequence
from functools import partial
from typing import Any

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.instrumentation.asgi import OpenTelemetryMiddleware
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.util.http import ExcludeList
from starlette.middleware import Middleware
from starlette.routing import Match, Route, WebSocketRoute
from starlette.types import Scope
from strawberry.extensions import SchemaExtension
from strawberry.extensions.tracing import OpenTelemetryExtension
from strawberry.types.execution import ExecutionContext

from store import Store, Tracing, Watch, watched

SERVICE = "benchmark-almanac"
# Probes and scrapes, many times a minute, say nothing of what clients do.
NOT_TRACED = [r"/(healthz|readyz|metrics)(\?.*)?$"]


def otlp_tracer_provider() -> TracerProvider:
    """Spans batched and sent by OTLP/HTTP (endpoint, headers and timeouts from OTEL_*)."""
    resource = Resource.create({SERVICE_NAME: os.environ.get("OTEL_SERVICE_NAME", SERVICE)})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    return provider


def operation_tracing(provider: trace.TracerProvider) -> type[SchemaExtension]:
    """Strawberry's OpenTelemetry extension, reporting to `provider`."""

    class OperationTracing(OpenTelemetryExtension):
        def __init__(self, *, execution_context: ExecutionContext | None = None) -> None:
            super().__init__(execution_context=execution_context, tracer_provider=provider)

    return OperationTracing


def request_tracing(
    provider: trace.TracerProvider, routes: Sequence[Route | WebSocketRoute]
) -> Middleware:
    """A span around each HTTP request (OpenTelemetry's ASGI middleware, outside every other),
    named by its route among the app's `routes`. Not for health checks and scrapes, nor the
    ASGI messages within."""
    return Middleware(
        OpenTelemetryMiddleware,
        tracer=provider.get_tracer("almanac.http"),
        excluded_urls=ExcludeList(NOT_TRACED),
        exclude_spans=["receive", "send"],
        default_span_details=partial(span_details, routes),
    )


def span_details(
    routes: Sequence[Route | WebSocketRoute], scope: Scope
) -> tuple[str, dict[str, Any]]:
    """`POST /benchmarks/{slug}.{format}`: the route, not the path (few names, not one a slug)."""
    method = scope.get("method", "HTTP")
    for route in routes:
        if route.matches(scope)[0] == Match.FULL:
            return f"{method} {route.path}", {"http.route": route.path}
    return method, {}


def traced_store(store: Store, provider: trace.TracerProvider) -> Store:
    """The store, a span for each call a traced request makes, a child of the resolver's span."""
    start = partial(
        provider.get_tracer("almanac.store").start_as_current_span, kind=trace.SpanKind.CLIENT
    )
    return watched(store, Watch(tracing=Tracing(start=start, current=trace.get_current_span)))


class WithTraceId(logging.Filter):
    """Each log line written within a span carries its trace ID ("-" outside any)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.trace_id = current_trace_id()
        return True


def current_trace_id() -> str:
    context = trace.get_current_span().get_span_context()
    return trace.format_trace_id(context.trace_id) if context.is_valid else "-"
