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


async def test_a_cursor_holds_its_place_when_benchmarks_are_added_before_it(
    admin: GraphQLClient,
) -> None:
    """Keyset cursors: the next page starts after the item the cursor names, whatever was
    added or removed before it meanwhile (an offset would repeat or skip items)."""
    first = (await admin.data(LIST, first=4, order="NAME"))["benchmarks"]
    named = [node["slug"] for node in first["nodes"]]
    await admin.data(
        """mutation { createBenchmark(slug: "aaa-first", input: {name: "AAA first",
             metric: {name: "Accuracy", unit: PERCENT}, category: "tool-use"}) { slug } }"""
    )
    after = first["pageInfo"]["endCursor"]
    rest = await admin.data(LIST, first=100, after=after, order="NAME")
    following = [node["slug"] for node in rest["benchmarks"]["nodes"]]
    assert "aaa-first" not in following
    assert not set(named) & set(following)
    assert len(named) + len(following) == 11
    assert rest["benchmarks"]["totalCount"] == 12


async def test_a_cursor_of_another_order_or_forged_is_bad_input(graphql: GraphQLClient) -> None:
    import base64

    by_name = (await graphql.data(LIST, first=2, order="NAME"))["benchmarks"]["pageInfo"]
    forged = base64.urlsafe_b64encode(b'after:["prominence",{"$gt":""},1,"a","b"]').decode()
    for cursor in (by_name["endCursor"], forged, "b2Zmc2V0OjQ="):
        body = await graphql(LIST, first=2, after=cursor, order="PROMINENCE")
        assert body["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT", body
        assert "not a cursor this API gave out" in body["errors"][0]["message"]


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


async def test_names_are_ordered_ignoring_case(admin: GraphQLClient) -> None:
    """`mcp-atlas` is named "MCP Atlas": a benchmark named in lower case sorts among the
    others by its letters, not after every capital."""
    await admin.data(
        """mutation { createBenchmark(slug: "lowercase-bench", input: {name: "lowercase bench",
             metric: {name: "Accuracy", unit: PERCENT}, category: "tool-use"}) { slug } }"""
    )
    names = await slugs(admin, order="NAME")
    assert names.index("deepsearchqa") < names.index("lowercase-bench") < names.index("mcp-atlas")


CREATE = """mutation($slug: String!, $input: BenchmarkInput!) {
  createBenchmark(slug: $slug, input: $input) { slug } }"""


def new_benchmark(name: str, **fields: object) -> dict[str, object]:
    return {
        "name": name,
        "metric": {"name": "Accuracy", "unit": "PERCENT"},
        "category": "tool-use",
        **fields,
    }


async def test_benchmarks_no_longer_in_use_come_last_by_prominence(admin: GraphQLClient) -> None:
    for status in ("RETIRED", "SATURATED"):
        fields = new_benchmark(f"Aaa {status.lower()}", status=status, prominence=9)
        await admin.data(CREATE, slug=f"aaa-{status.lower()}", input=fields)
    order = await slugs(admin)
    assert order[:-2] == SIBLINGS_BY_PROMINENCE + FAMILY_BY_NAME
    assert set(order[-2:]) == {"aaa-retired", "aaa-saturated"}


async def test_newest_release_first_unknown_last(admin: GraphQLClient) -> None:
    months = {"b-2023-11": "2023-11", "c-2024-03": "2024-03", "d-2024-11": "2024-11"}
    for slug, month in months.items():
        await admin.data(CREATE, slug=slug, input=new_benchmark(slug.upper(), releasedOn=month))
    unknown = sorted(SIBLINGS_BY_PROMINENCE, key=lambda slug: NAMES[slug].casefold())
    assert await slugs(admin, order="NEWEST_RELEASE") == [
        "d-2024-11",
        "c-2024-03",
        "b-2023-11",
        *FAMILY_BY_NAME,  # 2023-09, by name
        *unknown,  # no release month known: last, by name
    ]


NAMES = {
    "automationbench": "AutomationBench",
    "mcp-atlas": "MCP Atlas",
    "bfcl-v4": "BFCL V4",
    "tau3-bench-banking": "τ³-bench Banking",
    "toolathlon-verified": "Toolathlon-Verified",
    "deepsearchqa": "DeepSearchQA",
}
