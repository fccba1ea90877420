"""The document limits' measures: tokens counted before parsing, depth and aliases after."""

from graphql import parse

from request_limits.document import (
    DocumentLimits,
    alias_count,
    max_depth,
    token_count,
    too_many_tokens,
)


def test_token_count_stops_counting_past_the_limit() -> None:
    assert token_count("{ a b c }", stop_after=100) == 5
    assert token_count("{ " + "a " * 10_000 + "}", stop_after=10) == 11


def test_too_many_tokens_is_refused_with_its_code() -> None:
    limits = DocumentLimits(max_tokens=10, max_depth=5, max_aliases=5)
    assert too_many_tokens("{ a b c }", limits) is None
    refusal = too_many_tokens("{ " + "a " * 100 + "}", limits)
    assert refusal is not None
    assert refusal.code == "TOO_MANY_TOKENS"


def test_depth_counts_through_fragments() -> None:
    deep = """
        { benchmark(slug: "x") { ...P } }
        fragment P on Benchmark { parent { parent { parent { parent { parent { name } } } } } }
    """
    assert max_depth(parse(deep)) == 7


def test_depth_of_a_fragment_cycle_is_finite() -> None:
    cycle = '{ benchmark(slug: "x") { ...A } } fragment A on Benchmark { parent { ...A } }'
    assert max_depth(parse(cycle)) == 2


def test_aliases_are_counted_in_operations_and_fragments() -> None:
    bomb = "{ a: categories { slug } b: categories { slug } ...F } fragment F on Query { c: categories { s: slug } }"
    assert alias_count(parse(bomb)) == 4


def doubling_fragments(levels: int) -> str:
    """Each fragment spreads the next twice: 2**levels paths, in a few hundred characters."""
    chain = " ".join(
        f"fragment F{i} on Benchmark {{ parent {{ ...F{i + 1} }} tracks {{ ...F{i + 1} }} }}"
        for i in range(levels)
    )
    return (
        f'{{ benchmark(slug: "x") {{ ...F0 }} }} {chain} fragment F{levels} on Benchmark {{ name }}'
    )
