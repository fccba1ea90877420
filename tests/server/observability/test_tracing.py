"""OpenTelemetry spans (ALMANAC_TRACING=true): the HTTP request, the GraphQL operation, the
resolvers and the store calls, one trace a request, whose ID the request's log line carries."""

import logging

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import format_trace_id

from server.app import create_app
from server.observability.logs import log_config
from server.observability.tracing import WithTraceId
from server.settings import Settings
from store import Store
from tests.conftest import http_client

QUERY = """query Page($slug: String!) {
  benchmark(slug: $slug) { name leader { score } }
}"""


@pytest.fixture
def spans() -> InMemorySpanExporter:
    return InMemorySpanExporter()


def provider_of(exporter: InMemorySpanExporter) -> TracerProvider:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider


def parent_of(span: ReadableSpan, finished: list[ReadableSpan]) -> ReadableSpan:
    assert span.parent is not None, span.name
    [parent] = [s for s in finished if s.context.span_id == span.parent.span_id]
    return parent


async def test_a_request_is_one_trace_down_to_the_store(
    store: Store, spans: InMemorySpanExporter, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    app = create_app(Settings(tracing=True), store, tracer_provider=provider_of(spans))
    capsysbinary.readouterr()
    async with http_client(app) as http:
        response = await http.post(
            "/graphql",
            json={"query": QUERY, "variables": {"slug": "code-interpreter-benchmark-general"}},
        )
    assert response.json()["data"]["benchmark"]["name"]
    finished = list(spans.get_finished_spans())
    names = {span.name for span in finished}

    store_calls = [s for s in finished if s.name.startswith("store.")]
    assert "store.benchmark_with_neighbourhood" in {s.name for s in store_calls}
    resolvers = {parent_of(call, finished) for call in store_calls}
    assert {r.name for r in resolvers} == {"GraphQL Resolving: benchmark"}
    [resolver] = resolvers
    operation = parent_of(resolver, finished)
    assert operation.name == "GraphQL Query: Page"
    request = parent_of(operation, finished)
    assert request.name == "POST /graphql"
    assert request.attributes is not None
    assert request.attributes["http.route"] == "/graphql"
    assert "GraphQL Resolving: leader" in names
    assert len({span.context.trace_id for span in finished}) == 1

    assert app.services.request_log is not None
    app.services.request_log.flush()
    [line] = capsysbinary.readouterr().err.decode().splitlines()
    assert line.endswith(f" trace {format_trace_id(request.context.trace_id)}]")


def test_other_log_lines_carry_the_trace_id_too() -> None:
    record = logging.LogRecord("almanac.errors", logging.ERROR, __file__, 1, "failed", None, None)
    provider = TracerProvider()
    with provider.get_tracer("test").start_as_current_span("request") as span:
        assert WithTraceId().filter(record)
    assert record.trace_id == format_trace_id(span.get_span_context().trace_id)  # type: ignore[attr-defined]
    assert log_config(Settings(tracing=True))["handlers"]["main"]["filters"] == [
        "request_id",
        "trace_id",
    ]


async def test_a_kept_answer_is_one_span(store: Store, spans: InMemorySpanExporter) -> None:
    app = create_app(Settings(tracing=True), store, tracer_provider=provider_of(spans))
    request = {"query": QUERY, "variables": {"slug": "code-interpreter-benchmark-general"}}
    async with http_client(app) as http:
        await http.post("/graphql", json=request)
        spans.clear()
        await http.post("/graphql", json=request)
    assert [span.name for span in spans.get_finished_spans()] == ["POST /graphql"]


async def test_tracing_is_off_by_default(store: Store, spans: InMemorySpanExporter) -> None:
    app = create_app(Settings(), store, tracer_provider=provider_of(spans))
    async with http_client(app) as http:
        response = await http.post("/graphql", json={"query": "{ benchmarks { totalCount } }"})
    assert response.status_code == 200
    assert spans.get_finished_spans() == ()


async def test_spans_are_named_by_route_and_probes_are_not_traced(
    store: Store, spans: InMemorySpanExporter
) -> None:
    app = create_app(Settings(tracing=True), store, tracer_provider=provider_of(spans))
    async with http_client(app) as http:
        assert (await http.get("/healthz")).status_code == 200
        assert (await http.get("/readyz")).status_code == 200
        assert (await http.get("/benchmarks/code-interpreter-benchmark-general.csv")).is_success
    finished = spans.get_finished_spans()
    assert [span.name for span in finished if span.parent is None] == [
        "GET /benchmarks/{slug}.{format}"
    ]
    assert "store.ping" not in {span.name for span in finished}
