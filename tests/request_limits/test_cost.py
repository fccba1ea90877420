"""A request's cost, from its document: what the partner documentation promises."""

from typing import Any

import pytest
from graphql import (
    GraphQLArgument,
    GraphQLDefaultInput,
    GraphQLInt,
    GraphQLInterfaceType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    build_schema,
    get_introspection_query,
    graphql_sync,
    parse,
)

from api_errors import ApiError
from editing.inputs import MAX_CATEGORIES
from request_limits.cost import default_of, list_size, query_cost
from schema import schema
from schema.extensions.metering import LIST_SIZES, published_types

SCHEMA = published_types(schema)
assert SCHEMA.query_type is not None
TYPES_QUERY = SCHEMA.query_type

LEADERBOARD = 100  # Benchmark.leaderboard's default `first`
CATEGORIES = MAX_CATEGORIES  # Query.categories' @listSize(assumedSize:)
WRITE = 10  # a mutation's @cost(weight:)
RECOMPUTED = 100  # `asOf`'s @cost(weight:)
COMPUTED = 10  # a count or model computed from the whole leaderboard: its @cost(weight:)


def cost(text: str, operation: str | None = None, **variables: Any) -> int:
    return query_cost(SCHEMA, parse(text), operation, variables, LIST_SIZES)


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
    assert cost(text, n="lots") == 0  # refused by execution before anything runs


def test_nested_lists_multiply() -> None:
    text = "{ benchmarks(first: 10) { nodes { leaderboard { score model { name } } } } }"
    assert cost(text) == 1 + 10 * (1 + LEADERBOARD * (1 + 1))


def test_sliced_lists_cost_what_they_are_asked_for() -> None:
    text = '{ benchmark(slug: "x") { reads(first: 2) { nodes { added { modelName } } } } }'
    assert cost(text) == 1 + 1 + 2 * (1 + 50)
    text = (
        '{ benchmark(slug: "x") { reads(first: 2) { nodes { added(first: 7) { modelName } } } } }'
    )
    assert cost(text) == 1 + 1 + 2 * (1 + 7)
    assert cost('{ benchmark(slug: "x") { scoresOverTime(last: 30) { score } } }') == 1 + 30
    assert cost('{ model(slug: "x") { results(first: 3) { rank } } }') == 1 + 3


def test_lists_without_slicing_cost_their_bound() -> None:
    assert cost("{ categories { slug } }") == CATEGORIES
    assert cost('{ benchmark(slug: "x") { tracks { slug } } }') == 1 + 20
    assert cost('{ benchmark(slug: "x") { modelCardReports { nodes { score } } } }') == 1 + 1 + 100


@pytest.mark.parametrize(
    "text",
    [
        "{ benchmarks(first: 500) { nodes { name } } }",
        "{ benchmarks(first: -1) { nodes { name } } }",
        '{ benchmark(slug: "x") { leaderboard(first: 10001) { score } } }',
        '{ benchmark(slug: "x") { scoresOverTime(last: -5) { score } } }',
    ],
)
def test_a_slice_out_of_range_is_refused_before_it_runs(text: str) -> None:
    with pytest.raises(ApiError):
        cost(text)


def test_every_list_of_objects_is_sliced_or_bounded() -> None:
    """No list can return more objects than its cost counts: each says its size in the SDL."""
    for type_name, named in SCHEMA.type_map.items():
        if type_name.startswith("__"):
            continue
        for field_name, field in getattr(named, "fields", {}).items():
            of = field.type.of_type if isinstance(field.type, GraphQLNonNull) else field.type
            if not isinstance(of, GraphQLList):
                continue
            item = of.of_type.of_type if isinstance(of.of_type, GraphQLNonNull) else of.of_type
            if not isinstance(item, GraphQLObjectType | GraphQLInterfaceType):
                continue
            sizes = list_size(SCHEMA, field) or {}
            sliced = set(sizes.get("slicingArguments") or ()) & set(field.args)
            in_connection = type_name.endswith("Connection") and field_name in ("nodes", "edges")
            bounded = sizes.get("assumedSize") is not None
            assert sliced or in_connection or bounded, f"{type_name}.{field_name} is unbounded"


def test_the_costs_charged_are_the_ones_the_sdl_publishes() -> None:
    """One source: change a directive in the published SDL and the charge follows."""
    published = schema.as_str()
    assert "@listSize(assumedSize: 500)" in published
    assert "createLab(" in published
    cheaper = build_schema(
        published.replace("@listSize(assumedSize: 500)", "@listSize(assumedSize: 7)")
    )
    text = "{ categories { slug } }"
    assert cost(text) == 500
    assert query_cost(cheaper, parse(text), None, {}, LIST_SIZES) == 7


def test_fragments_count_on_their_own_type() -> None:
    text = '{ node(id: "x") { ... on Benchmark { leaderboard { score } } ...M } } fragment M on Model { name }'
    assert cost(text) == 1 + LEADERBOARD


def test_doubling_fragments_cost_what_they_return_computed_at_once() -> None:
    from tests.request_limits.test_document import doubling_fragments

    # parent (1) and tracks (20 of them) at every level: 21**levels, and never walked path by path.
    levels = 40
    expected = sum(21**i for i in range(1, levels + 1)) + 1
    assert cost(doubling_fragments(levels)) == expected


def test_a_fragment_spread_twice_in_one_place_counts_once() -> None:
    text = "{ ...C ...C } fragment C on Query { categories { slug } }"
    assert cost(text) == CATEGORIES


def test_only_the_chosen_operation_counts() -> None:
    text = "query A { categories { slug } } query B { modelCardCoverage { labsRead } }"
    assert cost(text, "B") == 1


def test_mutations_cost_more_for_their_write() -> None:
    text = 'mutation { createLab(input: {slug: "a", name: "A"}) { slug } }'
    assert cost(text) == WRITE


def test_an_operation_the_schema_has_no_field_for_costs_nothing_here() -> None:
    assert cost("subscription { benchmarks { totalCount } }") == 0  # refused by validation


def test_an_object_selected_without_fields_costs_its_weight() -> None:
    assert cost('{ benchmark(slug: "x") }') == 1  # refused by validation, at this price


def test_inline_fragments_add_to_what_is_around_them() -> None:
    plain = '{ benchmark(slug: "x") { metric { name } leaderboard { score } } }'
    untyped = '{ benchmark(slug: "x") { metric { name } ... { leaderboard { score } } } }'
    typed = (
        '{ benchmark(slug: "x") { metric { name } ... on Benchmark { leaderboard { score } } } }'
    )
    assert cost(plain) == cost(untyped) == cost(typed) == 1 + 1 + LEADERBOARD


def test_a_fragment_is_priced_on_its_own_type_where_it_is_spread() -> None:
    text = '{ node(id: "x") { ...B } } fragment B on Benchmark { leaderboard { score } }'
    assert cost(text) == 1 + LEADERBOARD
    assert cost("{ ...Missing }") == 0  # refused by validation


def test_the_slicing_argument_is_found_among_the_others() -> None:
    assert cost("{ benchmarks(orderBy: NAME, after: null, first: 7) { nodes { name } } }") == 8


def test_a_variable_sent_without_a_value_leaves_the_schemas_default() -> None:
    text = "query($n: Int) { benchmarks(first: $n) { nodes { name } } }"
    assert cost(text) == 1 + 20


def test_a_slice_of_nothing_is_allowed() -> None:
    assert cost("{ benchmarks(first: 0) { nodes { name } } }") == 1


def test_a_list_the_sdl_leaves_unbounded_is_named_as_a_schema_error() -> None:
    unbounded = build_schema(schema.as_str().replace("@listSize(assumedSize: 500)", ""))
    with pytest.raises(ValueError, match=r"^Query\.categories is a list without @listSize$"):
        query_cost(unbounded, parse("{ categories { slug } }"), None, {}, LIST_SIZES)


def test_a_document_with_type_definitions_is_priced_on_its_operation() -> None:
    assert cost("{ categories { slug } } type Extra { a: Int }") == CATEGORIES  # then refused


CHANGES = 20  # Query.changes' default `first`


def test_every_slicing_argument_given_counts_the_largest() -> None:
    assert cost("{ changes(last: 60) { nodes { sequence } } }") == 1 + 60
    assert cost("{ changes(first: 0, last: 60) { nodes { sequence } } }") == 1 + 60
    assert cost("{ changes(first: 60, last: 2) { nodes { sequence } } }") == 1 + 60
    assert cost("{ changes(last: null) { nodes { sequence } } }") == 1 + CHANGES


def test_with_no_slicing_argument_given_the_default_counts() -> None:
    assert cost("{ changes { nodes { sequence } } }") == 1 + CHANGES
    text = "query($n: Int) { changes(last: $n) { nodes { sequence } } }"
    assert cost(text) == 1 + CHANGES  # a variable without a value is no argument given
    assert cost(text, n=None) == 1 + CHANGES
    assert cost(text, n=70) == 1 + 70


@pytest.mark.parametrize(
    "text",
    [
        "{ changes(last: 101) { nodes { sequence } } }",
        "{ changes(first: 0, last: 101) { nodes { sequence } } }",
        "{ changes(last: -1) { nodes { sequence } } }",
    ],
)
def test_every_slicing_argument_is_refused_out_of_range(text: str) -> None:
    with pytest.raises(ApiError, match=r"^`last` must be between 0 and 100"):
        cost(text)


def test_a_slice_at_its_maximum_is_allowed() -> None:
    assert cost("{ changes(last: 100) { nodes { sequence } } }") == 1 + 100
    assert cost('{ benchmark(slug: "x") { leaderboard(first: 10000) { score } } }') == 1 + 10_000


SLICED = build_schema(
    """
    directive @listSize(assumedSize: Int, slicingArguments: [String!], sizedFields: [String!],
      requireOneSlicingArgument: Boolean = true) on FIELD_DEFINITION
    type Item { name: String }
    type Page { items: [Item] extra: [Item] @listSize(assumedSize: 2) }
    type Query {
      one(first: Int, last: Int): [Item] @listSize(slicingArguments: ["first", "last"])
      any(first: Int = 4, last: Int): [Item]
        @listSize(slicingArguments: ["first", "last"], requireOneSlicingArgument: false)
      none(first: Int, last: Int): [Item]
        @listSize(slicingArguments: ["first", "last"], requireOneSlicingArgument: false)
      page(first: Int, last: Int): Page
        @listSize(slicingArguments: ["first", "last"], sizedFields: ["items"])
    }
    """
)


def priced(text: str) -> int:
    return query_cost(SLICED, parse(text), None, {}, LIST_SIZES)


def test_require_one_slicing_argument_takes_exactly_one() -> None:
    """The spec's `requireOneSlicingArgument` (true unless said otherwise): exactly one of the
    slicing arguments is given, or the request is refused; false: any, the largest counts."""

    assert priced("{ one(last: 3) { name } }") == 3
    for refused in ("{ one { name } }", "{ one(first: 2, last: 3) { name } }"):
        with pytest.raises(ApiError, match=r"^`one` takes exactly one of first, last\.$"):
            priced(refused)
    assert priced("{ any { name } }") == 4
    assert priced("{ any(first: 2, last: 3) { name } }") == 3
    with pytest.raises(ApiError, match=r"^`page` takes exactly one of first, last\.$"):
        priced("{ page { items { name } } }")


def test_with_no_slicing_argument_given_nor_a_default_a_list_counts_none() -> None:
    assert priced("{ none { name } }") == 0


def test_a_connections_slice_sizes_only_the_lists_it_names() -> None:
    assert priced("{ page(first: 3) { items { name } } }") == 1 + 3
    assert priced("{ page(first: 3) { extra { name } } }") == 1 + 2


def test_an_operation_the_schema_has_no_root_for_costs_nothing() -> None:
    assert priced("mutation { one { name } }") == 0  # refused by validation


def test_only_the_selected_operations_variable_defaults_count() -> None:
    text = """query Small($n: Int! = 1) { benchmarks(first: $n) { nodes { name } } }
        query Large($n: Int! = 100) { benchmarks(first: $n) { nodes { name } } }"""
    assert cost(text, "Small") == 1 + 1
    assert cost(text, "Large") == 1 + 100
    assert cost(text, "Small", n=7) == 1 + 7


def test_variables_are_coerced_as_execution_coerces_them() -> None:
    text = "query($n: Int!) { benchmarks(first: $n) { nodes { name } } }"
    assert cost(text, n=5.0) == 1 + 5  # an integral float is an Int
    assert cost(text, n=5.5) == 0  # refused by execution: nothing runs
    listed = "query($f: ChangeFilter) { changes(filter: $f, last: 3) { nodes { sequence } } }"
    assert cost(listed, f={"benchmarks": "one"}) == 1 + 3  # one item coerced to a list


def objects_in(value: Any) -> int:
    """How many objects an answer holds."""
    if isinstance(value, dict):
        return 1 + sum(objects_in(item) for item in value.values())
    if isinstance(value, list):
        return sum(objects_in(item) for item in value)
    return 0


def test_a_full_introspection_costs_the_objects_it_returns() -> None:
    text = get_introspection_query(descriptions=True)
    answer = graphql_sync(SCHEMA, text)
    assert answer.errors is None
    assert cost(text) == objects_in(answer.data) - 1  # the answer's own `data` object is free
    assert cost(text) > 1_000


def test_aliased_introspection_costs_each_alias() -> None:
    one = "__schema { types { name fields { name args { name } } } }"
    single = cost("{ " + one + " }")
    many = "{ " + " ".join(f"a{i}: {one}" for i in range(29)) + " }"
    assert cost(many) == 29 * single
    assert cost('{ __type(name: "Benchmark") { fields { name } } }') == 1 + len(
        SCHEMA.type_map["Benchmark"].fields  # type: ignore[attr-defined]
    )
    assert cost('{ __type(name: "Nothing") { fields { name } } }') == 0
    assert cost("{ __typename }") == 0


def test_an_argument_that_computes_carries_its_cost() -> None:
    """`asOf` makes a field compute the leaderboard of a day anew: its `@cost` counts once; a
    count computed from the whole leaderboard weighs its own."""
    assert cost('{ benchmark(slug: "x") { entryCount } }') == 1 + COMPUTED
    assert cost('{ benchmark(slug: "x") { entryCount(asOf: null) } }') == 1 + COMPUTED
    text = '{ benchmark(slug: "x") { entryCount(asOf: "2026-01-01") } }'
    assert cost(text) == 1 + COMPUTED + RECOMPUTED
    text = '{ benchmark(slug: "x") { leaderboard(first: 3, asOf: "2026-01-01") { score } } }'
    assert cost(text) == 1 + RECOMPUTED + 3
    for argument in ("reportedBy: [THIRD_PARTY]", "excludeSelfReported: true"):
        text = f'{{ benchmark(slug: "x") {{ leaders(first: 2, {argument}) {{ score }} }} }}'
        assert cost(text) == 1 + RECOMPUTED + 2


@pytest.mark.parametrize(
    "field",
    ["entryCount", "trackedModelCount", "strongestModelTested { slug }", "lastModelAdded { slug }"],
)
def test_a_field_computed_from_the_whole_leaderboard_weighs_each_time_it_is_asked(
    field: str,
) -> None:
    aliased = " ".join(f"a{number}: {field}" for number in range(28))
    text = f"{{ benchmarks(first: 100) {{ nodes {{ {aliased} }} }} }}"
    assert cost(text) == 1 + 100 * (1 + 28 * COMPUTED)  # 28,101: over the maximum, refused
    text = 'query($d: Date) { benchmark(slug: "x") { leader(asOf: $d) { score } } }'
    assert cost(text) == 1 + 1
    assert cost(text, d="2026-01-01") == 1 + RECOMPUTED + 1


def test_two_fragments_each_cost_their_own() -> None:
    text = """{ ...A ...B } fragment A on Query { categories { slug } }
        fragment B on Query { modelCardCoverage { labsRead } }"""
    assert cost(text) == CATEGORIES + 1


def test_documents_validation_refuses_are_priced_without_failing() -> None:
    # A fragment on an unknown type counts where it is spread; one on a scalar, nothing; a field
    # an interface lacks, nothing.
    assert cost("{ ...F } fragment F on Nothing { categories { slug } }") == CATEGORIES
    assert cost("{ ...F } fragment F on String { categories { slug } }") == 0
    assert cost("{ changes { nodes { subject { name } } } }") == 1 + CHANGES * (1 + 1)
    assert cost('{ benchmarks(first: "x") { nodes { name } } }') == 0  # execution refuses it
    assert cost("{ __type(name: 5) { name } }") == 0
    assert cost("{ __schema }") == 1


def test_introspection_counts_fragments_and_variables() -> None:
    types = len(SCHEMA.type_map)
    assert cost("{ __schema { queryType { name } ... on __Schema { types { name } } } }") == (
        1 + 1 + types
    )
    fields = len(SCHEMA.type_map["Benchmark"].fields)  # type: ignore[attr-defined]
    interfaces = len(SCHEMA.type_map["Benchmark"].interfaces)  # type: ignore[attr-defined]
    text = """query($t: String!) { __type(name: $t) { fields { name } ...I } }
        fragment I on __Type { interfaces { name } }"""
    assert cost(text, t="Benchmark") == 1 + fields + interfaces
    assert cost(text, t="Nothing") == 0


def test_doubling_introspection_fragments_are_computed_at_once() -> None:
    levels = 40
    fragments = " ".join(
        f"fragment {side}{i} on __Type {{ name ofType {{ ...A{i + 1} ...B{i + 1} }} }}"
        for i in range(levels)
        for side in "AB"
    )
    text = f'{{ __type(name: "Benchmark") {{ ...A0 }} }} {fragments} fragment A{levels} on __Type {{ name }} fragment B{levels} on __Type {{ name }}'
    assert cost(text) == 1  # `Benchmark` is a named type: no `ofType`


def test_an_arguments_default_is_read_from_the_sdl_or_a_value() -> None:
    assert TYPES_QUERY.fields["benchmarks"].args["first"].default is not None
    assert default_of(TYPES_QUERY.fields["benchmarks"].args["first"]) == 20
    assert default_of(TYPES_QUERY.fields["changes"].args["last"]) is None
    assert default_of(GraphQLArgument(GraphQLInt, default=GraphQLDefaultInput(value=7))) == 7
    assert default_of(GraphQLArgument(GraphQLInt)) is None
