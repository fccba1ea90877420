"""A benchmark's siblings past those read with it (20): a catalog row's, read once its
neighbourhood is loaded, and a page's, read on their own."""

from tests.conftest import GraphQLClient

CREATE = """
mutation($slug: String!, $input: BenchmarkInput!) { createBenchmark(slug: $slug, input: $input) {
  slug } }"""
CATALOG = """query($first: Int!) {
  benchmarks(first: 3, filter: {category: "crowded"}) {
    nodes { slug siblings(first: $first) { totalCount nodes { slug } } } } }"""
PAGE = """query($first: Int!) {
  benchmark(slug: "crowded-00") { siblings(first: $first) { totalCount nodes { slug } } } }"""
CROWD = 23


async def test_siblings_past_those_read_with_a_benchmark(admin: GraphQLClient) -> None:
    """A catalog row asking for more than 20 used to answer INTERNAL_SERVER_ERROR (a coroutine
    returned by the coroutine GraphQL awaited)."""
    await admin.data('mutation { createCategory(input: {slug: "crowded", name: "C"}) { slug } }')
    slugs = [f"crowded-{n:02}" for n in range(CROWD)]
    for slug in slugs:
        metric = {"name": "Accuracy", "unit": "PERCENT"}
        fields = {"name": slug, "metric": metric, "category": "crowded"}
        await admin.data(CREATE, slug=slug, input=fields)
    for first in (20, 21, 22):
        rows = (await admin.data(CATALOG, first=first))["benchmarks"]["nodes"]
        assert len(rows) == 3
        for row in rows:
            siblings = row["siblings"]
            assert siblings["totalCount"] == CROWD - 1
            shown = [node["slug"] for node in siblings["nodes"]]
            assert shown == [slug for slug in slugs if slug != row["slug"]][:first]
        page = (await admin.data(PAGE, first=first))["benchmark"]["siblings"]
        assert [node["slug"] for node in page["nodes"]] == slugs[1 : first + 1]
