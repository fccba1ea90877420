"""Each document limit refuses with its own code, before anything runs."""

import contextlib
import traceback

import pytest
from graphql import get_introspection_query, parse

from request_limits.document import (
    DocumentChecker,
    DocumentLimits,
    DocumentRefused,
    alias_count,
    checked_document,
    max_depth,
    token_count,
)
from schema import schema

LIMITS = DocumentLimits(max_tokens=200, max_depth=6, max_aliases=3)
SCHEMA = schema._schema


def refusal_codes(text: str, limits: DocumentLimits = LIMITS) -> list[str]:
    with pytest.raises(DocumentRefused) as refused:
        checked_document(SCHEMA, text, limits)
    return [(error.extensions or {})["code"] for error in refused.value.errors]


def test_a_good_document_passes() -> None:
    document = checked_document(SCHEMA, "{ categories { slug name } }", LIMITS)
    assert document.definitions


def test_token_count_stops_counting_past_the_limit() -> None:
    assert token_count("{ a b c }", stop_after=100) == 5
    assert token_count("{ " + "a " * 10_000 + "}", stop_after=10) == 11


def test_too_many_tokens() -> None:
    [code] = refusal_codes("{ categories { " + "slug " * 300 + "} }")
    assert code == "TOO_MANY_TOKENS"


def test_parse_failure() -> None:
    assert refusal_codes("{ categories { slug ") == ["GRAPHQL_PARSE_FAILED"]


def test_fragment_cycle_is_refused_before_depth_is_measured() -> None:
    cycle = """
        { benchmark(slug: "x") { ...A } }
        fragment A on Benchmark { parent { ...B } }
        fragment B on Benchmark { tracks { ...A } }
    """
    assert set(refusal_codes(cycle)) == {"FRAGMENT_CYCLE"}


def test_depth_counts_through_fragments() -> None:
    deep = """
        { benchmark(slug: "x") { ...P } }
        fragment P on Benchmark { parent { parent { parent { parent { parent { name } } } } } }
    """
    assert max_depth(parse(deep)) == 7
    assert refusal_codes(deep) == ["MAX_DEPTH_EXCEEDED"]


def test_absurd_nesting_is_refused_not_crashed_on() -> None:
    fields = "{ " + "a { " * 2_000 + "b" + " }" * 2_000 + " }"
    assert refusal_codes(fields, DocumentLimits(10_000, 6, 3)) == ["GRAPHQL_PARSE_FAILED"]
    chain = " ".join(
        f"fragment F{i} on Benchmark {{ parent {{ ...F{i + 1} }} }}" for i in range(440)
    )
    fragments = (
        '{ benchmark(slug: "x") { ...F0 } } ' + chain + " fragment F440 on Benchmark { name }"
    )
    assert refusal_codes(fragments, DocumentLimits(10_000, 6, 3)) == ["MAX_DEPTH_EXCEEDED"]


def doubling_fragments(levels: int) -> str:
    """Each fragment spreads the next twice: 2**levels paths, in a few hundred characters."""
    chain = " ".join(
        f"fragment F{i} on Benchmark {{ parent {{ ...F{i + 1} }} tracks {{ ...F{i + 1} }} }}"
        for i in range(levels)
    )
    return (
        f'{{ benchmark(slug: "x") {{ ...F0 }} }} {chain} fragment F{levels} on Benchmark {{ name }}'
    )


def test_doubling_fragments_are_measured_without_walking_every_path() -> None:
    document = parse(doubling_fragments(60))
    assert max_depth(document) == 62
    assert refusal_codes(doubling_fragments(60), DocumentLimits(10_000, 15, 3)) == [
        "MAX_DEPTH_EXCEEDED"
    ]


def test_aliases_are_counted_in_operations_and_fragments() -> None:
    bomb = "{ a: categories { slug } b: categories { slug } ...F } fragment F on Query { c: categories { s: slug } }"
    assert alias_count(parse(bomb)) == 4
    assert refusal_codes(bomb) == ["TOO_MANY_ALIASES"]


def test_validation_failures_are_typed() -> None:
    assert refusal_codes("{ categories { nope } }") == ["GRAPHQL_VALIDATION_FAILED"]
    # A literal our Date scalar refuses is the client's bad input, not a bad document.
    impossible = 'mutation { createModel(slug: "m", input: {name: "M", lab: "l", releasedOn: "2023-13"}) { slug } }'
    assert refusal_codes(impossible, DocumentLimits(500, 6, 3)) == ["BAD_USER_INPUT"]


def test_graphiql_introspection_fits_the_default_limits() -> None:
    from server.settings import Settings

    query = get_introspection_query(descriptions=True, input_value_deprecation=True)
    checked_document(SCHEMA, query, Settings().document_limits)


def test_checker_remembers_documents_and_refusals() -> None:
    checker = DocumentChecker(SCHEMA, LIMITS, max_bytes=1_000_000)
    assert checker.check("{ categories { slug } }") is checker.check("{ categories { slug } }")
    with pytest.raises(DocumentRefused) as first:
        checker.check("{ nope }")
    with pytest.raises(DocumentRefused) as second:
        checker.check("{ nope }")
    assert first.value.errors is second.value.errors


def test_a_repeated_refusal_is_raised_fresh_without_a_growing_traceback() -> None:
    checker = DocumentChecker(SCHEMA, LIMITS, max_bytes=1_000_000)
    depths = []
    for _ in range(100):
        try:
            checker.check("{ nosuchfield }")
        except DocumentRefused as refused:
            depths.append(len(traceback.extract_tb(refused.__traceback__)))
    assert depths == [depths[0]] * 100


def test_checker_holds_no_more_than_its_budget() -> None:
    checker = DocumentChecker(SCHEMA, LIMITS, max_bytes=200_000)
    for i in range(200):
        with contextlib.suppress(DocumentRefused):
            checker.check(f"#{i:05} {'x' * 9_000}\n{{ categories {{ slug }} }}")
    # Each entry counts its 9 KB text: at most some twenty fit, whatever was sent.
    assert checker.seen.bytes_held <= 200_000
    assert 10 <= len(checker.seen) <= 22
