"""Each document limit refuses with its own code, before anything runs, through the schema's
own pipeline; documents and refusals are remembered within a bounded memory."""

import traceback
from typing import Any

from graphql import get_introspection_query
from strawberry.extensions import MaxAliasesLimiter
from strawberry.types import ExecutionResult

from request_limits.document import DocumentLimits
from schema import new_context, schema
from schema.extensions.services import Services
from server.settings import Settings
from tests.request_limits.test_document import doubling_fragments

LIMITS = DocumentLimits(max_tokens=200, max_depth=6, max_aliases=3)


def services(limits: DocumentLimits = LIMITS, document_cache_bytes: int = 1_000_000) -> Services:
    return Services.create(
        limits,
        document_cache_bytes=document_cache_bytes,
        cost_cache_bytes=100_000,
        answer_cache_bytes=0,
    )


async def run(text: str, shared: Services | None = None, store: Any = None) -> ExecutionResult:
    context = new_context(store)
    context.services = shared or services()
    return await schema.execute(text, context_value=context)


async def refusal_codes(text: str, limits: DocumentLimits = LIMITS) -> list[str]:
    result = await run(text, services(limits))
    assert result.data is None
    return [(error.extensions or {}).get("code", "") for error in result.errors or []]


async def test_a_good_document_runs() -> None:
    result = await run("{ __typename }")
    assert result.errors is None
    assert result.data == {"__typename": "Query"}


async def test_too_many_tokens() -> None:
    assert await refusal_codes("{ categories { " + "slug " * 300 + "} }") == ["TOO_MANY_TOKENS"]


async def test_parse_failure() -> None:
    assert await refusal_codes("{ categories { slug ") == ["GRAPHQL_PARSE_FAILED"]


async def test_fragment_cycle() -> None:
    cycle = """
        { benchmark(slug: "x") { ...A } }
        fragment A on Benchmark { parent { ...B } }
        fragment B on Benchmark { tracks { ...A } }
    """
    assert set(await refusal_codes(cycle)) == {"FRAGMENT_CYCLE"}


async def test_depth_counts_through_fragments() -> None:
    deep = """
        { benchmark(slug: "x") { ...P } }
        fragment P on Benchmark { parent { parent { parent { parent { parent { name } } } } } }
    """
    assert await refusal_codes(deep) == ["MAX_DEPTH_EXCEEDED"]


async def test_absurd_nesting_is_refused_not_crashed_on() -> None:
    fields = "{ " + "a { " * 2_000 + "b" + " }" * 2_000 + " }"
    assert await refusal_codes(fields, DocumentLimits(10_000, 6, 3)) == ["GRAPHQL_PARSE_FAILED"]
    chain = " ".join(
        f"fragment F{i} on Benchmark {{ parent {{ ...F{i + 1} }} }}" for i in range(440)
    )
    fragments = (
        '{ benchmark(slug: "x") { ...F0 } } ' + chain + " fragment F440 on Benchmark { name }"
    )
    assert await refusal_codes(fragments, DocumentLimits(10_000, 6, 3)) == ["MAX_DEPTH_EXCEEDED"]


async def test_doubling_fragments_are_measured_without_walking_every_path() -> None:
    codes = await refusal_codes(doubling_fragments(60), DocumentLimits(10_000, 15, 3))
    assert codes == ["MAX_DEPTH_EXCEEDED"]


async def test_aliases_are_counted_in_operations_and_fragments() -> None:
    bomb = "{ a: categories { slug } b: categories { slug } ...F } fragment F on Query { c: categories { s: slug } }"
    assert await refusal_codes(bomb) == ["TOO_MANY_ALIASES"]


async def test_validation_failures_are_typed() -> None:
    assert await refusal_codes("{ categories { nope } }") == ["GRAPHQL_VALIDATION_FAILED"]
    # A literal our Date scalar refuses is the client's bad input, not a bad document.
    impossible = 'mutation { createModel(slug: "m", input: {name: "M", lab: "l", releasedOn: "2023-13"}) { slug } }'
    assert await refusal_codes(impossible, DocumentLimits(500, 6, 3)) == ["BAD_USER_INPUT"]


async def test_graphiql_introspection_fits_the_default_limits() -> None:
    query = get_introspection_query(descriptions=True, input_value_deprecation=True)
    result = await run(query, services(Settings().document_limits))
    assert result.errors is None


async def test_documents_and_refusals_are_remembered() -> None:
    shared = services()
    await run("{ __typename }", shared)
    known = shared.documents.get("{ __typename }")
    assert known is not None
    await run("{ __typename }", shared)
    assert shared.documents.get("{ __typename }") is known
    first = await run("{ nope }", shared)
    second = await run("{ nope }", shared)
    assert first.errors is not None
    assert second.errors is not None
    assert [e.message for e in first.errors] == [e.message for e in second.errors]


async def test_a_repeated_parse_refusal_is_raised_fresh_without_a_growing_traceback() -> None:
    shared = services()
    depths = []
    for _ in range(100):
        result = await run("{ nosuchfield ", shared)
        assert result.errors is not None
        original = result.errors[0].original_error or result.errors[0]
        depths.append(len(traceback.extract_tb(original.__traceback__)))
    assert depths == [depths[0]] * 100


async def test_memory_holds_no_more_than_its_budget() -> None:
    shared = services(document_cache_bytes=200_000)
    for i in range(200):
        await run(f"#{i:05} {'x' * 9_000}\n{{ __typename }}", shared)
    # Each entry counts its 9 KB text: at most some twenty fit, whatever was sent.
    assert shared.documents.bytes_held <= 200_000
    assert 10 <= len(shared.documents) <= 22


async def test_a_validation_extension_added_to_the_schema_is_applied(monkeypatch: Any) -> None:
    monkeypatch.setattr(schema, "extensions", [*schema.extensions, MaxAliasesLimiter(1)])
    result = await run("{ a: __typename b: __typename }")
    assert result.errors is not None
    # Strawberry's own message: this API's limit (30 aliases) would have let the document run.
    assert [error.message for error in result.errors] == ["2 aliases found. Allowed: 1"]
