"""`benchmarks`, `categories`: paging, filters and orders over the bundled data."""

from tests.conftest import GraphQLClient

LIST = """
query List($first: Int!, $after: String, $filter: BenchmarkFilter, $order: BenchmarkOrder!) {
  benchmarks(first: $first, after: $after, filter: $filter, orderBy: $order) {
    totalCount
    nodes { slug name trackedLeader { modelName } }
    pageInfo { hasNextPage hasPreviousPage endCursor }
  }
}
"""

SIBLINGS_BY_PROMINENCE = [
    "automationbench",
    "mcp-atlas",
    "bfcl-v4",
    "tau3-bench-banking",
    "toolathlon-verified",
    "deepsearchqa",
]
FAMILY_BY_NAME = [
    "code-interpreter-benchmark",
    "code-interpreter-benchmark-general",
    "code-interpreter-benchmark-math",
    "code-interpreter-benchmark-visualization-easy",
    "code-interpreter-benchmark-visualization-hard",
]


async def slugs(graphql: GraphQLClient, **variables: object) -> list[str]:
    variables = {"first": 100, "order": "PROMINENCE", **variables}
    data = await graphql.data(LIST, **variables)
    return [node["slug"] for node in data["benchmarks"]["nodes"]]


async def test_default_order_is_in_use_then_prominence_then_name(graphql: GraphQLClient) -> None:
    assert await slugs(graphql) == SIBLINGS_BY_PROMINENCE + FAMILY_BY_NAME


async def test_paging_walks_the_whole_list_once(graphql: GraphQLClient) -> None:
    seen: list[str] = []
    after = None
    pages = 0
    while True:
        data = await graphql.data(LIST, first=4, after=after, order="PROMINENCE")
        connection = data["benchmarks"]
        assert connection["totalCount"] == 11
        assert connection["pageInfo"]["hasPreviousPage"] == (after is not None)
        seen += [node["slug"] for node in connection["nodes"]]
        pages += 1
        if not connection["pageInfo"]["hasNextPage"]:
            break
        after = connection["pageInfo"]["endCursor"]
    assert pages == 3
    assert seen == SIBLINGS_BY_PROMINENCE + FAMILY_BY_NAME


async def test_nodes_carry_their_tracked_leader(graphql: GraphQLClient) -> None:
    data = await graphql.data(LIST, first=2, order="PROMINENCE")
    leaders = [node["trackedLeader"]["modelName"] for node in data["benchmarks"]["nodes"]]
    assert leaders == ["Gemini 4 Carbon", "Gemini 4 Argon"]


async def test_name_order(graphql: GraphQLClient) -> None:
    names = await slugs(graphql, order="NAME")
    assert names[:5] == ["automationbench", "bfcl-v4", *FAMILY_BY_NAME[:3]]


async def test_filters(graphql: GraphQLClient) -> None:
    assert await slugs(graphql, filter={"lab": "qwen"}) == FAMILY_BY_NAME
    assert await slugs(graphql, filter={"category": "tool-use"}) == (
        SIBLINGS_BY_PROMINENCE + FAMILY_BY_NAME
    )
    assert await slugs(graphql, filter={"search": "VISUAL"}) == FAMILY_BY_NAME[3:]
    assert await slugs(graphql, filter={"search": "(.*"}) == []  # Searched as text, not regex.
    assert await slugs(graphql, filter={"kind": "FUNCTION_CALLING", "lab": "qwen"}) == (
        FAMILY_BY_NAME
    )
    assert await slugs(graphql, filter={"status": "RETIRED"}) == []
    assert await slugs(graphql, filter={"category": "no-such-category"}) == []


async def test_categories(graphql: GraphQLClient) -> None:
    data = await graphql.data("{ categories { slug name benchmarkCount } }")
    assert data["categories"] == [{"slug": "tool-use", "name": "Tool use", "benchmarkCount": 11}]


async def test_first_zero_counts_without_nodes(graphql: GraphQLClient) -> None:
    data = await graphql.data(LIST, first=0, order="PROMINENCE")
    assert data["benchmarks"]["totalCount"] == 11
    assert data["benchmarks"]["nodes"] == []
