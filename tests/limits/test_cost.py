"""A request's cost, from its document: what the partner documentation promises."""

from typing import Any

from graphql import parse

from limits.cost import ASSUMED_LIST_SIZES, DEFAULT_LIST_SIZE, MUTATION_COST, query_cost
from schema import schema

LEADERBOARD = ASSUMED_LIST_SIZES[("Benchmark", "leaderboard")]


def cost(text: str, operation: str | None = None, **variables: Any) -> int:
    return query_cost(schema._schema, parse(text), operation, variables)


def test_scalars_are_free_and_objects_cost_one() -> None:
    assert cost("{ modelCardCoverage { labsRead launchPostsRead } }") == 1
    assert cost('{ benchmark(slug: "x") { name slug metric { name } } }') == 2


def test_a_connection_costs_first_times_its_nodes() -> None:
    assert cost("{ benchmarks(first: 7) { totalCount nodes { name } } }") == 1 + 7
    assert cost("{ benchmarks(first: 7) { edges { node { name } } } }") == 1 + 7 * 2
    assert cost("{ benchmarks(first: 7) { pageInfo { hasNextPage } } }") == 1 + 1


def test_first_comes_from_variables_defaults_or_the_schema() -> None:
    text = "query($n: Int!) { benchmarks(first: $n) { nodes { name } } }"
    assert cost(text, n=3) == 4
    assert cost("query($n: Int! = 5) { benchmarks(first: $n) { nodes { name } } }") == 6
    assert cost("{ benchmarks { nodes { name } } }") == 1 + 20  # the schema's default
    assert cost(text, n="lots") == 1  # refused later by validation, at no cost


def test_nested_lists_multiply() -> None:
    text = "{ benchmarks(first: 10) { nodes { leaderboard { score model { name } } } } }"
    assert cost(text) == 1 + 10 * (1 + LEADERBOARD * (1 + 1))


def test_lists_without_first_have_an_assumed_size() -> None:
    assert cost("{ categories { slug } }") == ASSUMED_LIST_SIZES[("Query", "categories")]
    text = '{ benchmark(slug: "x") { reads(first: 2) { nodes { added { modelName } } } } }'
    assert cost(text) == 1 + 1 + 2 * (1 + ASSUMED_LIST_SIZES[("LeaderboardRead", "added")])
    assert DEFAULT_LIST_SIZE > 0


def test_fragments_count_on_their_own_type() -> None:
    text = '{ node(id: "x") { ... on Benchmark { leaderboard { score } } ...M } } fragment M on Model { name }'
    assert cost(text) == 1 + LEADERBOARD


def test_doubling_fragments_cost_what_they_return_computed_at_once() -> None:
    from tests.limits.test_document import doubling_fragments

    # parent (1) and tracks (10 of them) at every level: 11**levels, and never walked path by path.
    levels = 40
    expected = sum(11**i for i in range(1, levels + 1)) + 1
    assert cost(doubling_fragments(levels)) == expected


def test_a_fragment_spread_twice_in_one_place_counts_once() -> None:
    text = "{ ...C ...C } fragment C on Query { categories { slug } }"
    assert cost(text) == ASSUMED_LIST_SIZES[("Query", "categories")]


def test_only_the_chosen_operation_counts() -> None:
    text = "query A { categories { slug } } query B { modelCardCoverage { labsRead } }"
    assert cost(text, "B") == 1


def test_mutations_cost_more_for_their_write() -> None:
    text = 'mutation { createLab(input: {slug: "a", name: "A"}) { slug } }'
    assert cost(text) == MUTATION_COST + 1


def test_introspection_is_free() -> None:
    assert cost("{ __schema { types { name fields { name } } } __typename }") == 0
