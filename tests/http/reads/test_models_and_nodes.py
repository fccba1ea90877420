"""`model`, `models` and `node`: the curated model list and global IDs."""

import base64

from tests.conftest import GraphQLClient
from tests.published import COMBINED_RESULTS, TRACKS, expected_board, track_scores

MODEL = """
query Model($slug: String!) {
  model(slug: $slug) {
    id slug name aliases lab { slug name } releasedOn capabilityIndexRank
    standings(first: 100) {
      totalCount
      nodes { benchmark { slug } rank score setting leads leadsTrackedModels }
    }
  }
}
"""


def rank_of(name: str, scores: dict[str, float]) -> int:
    return [row[0] for row in expected_board(scores)].index(name) + 1


async def test_model_with_results_across_benchmarks(graphql: GraphQLClient) -> None:
    model = (await graphql.data(MODEL, slug="qwen-14b"))["model"]
    assert model["name"] == "Qwen-14B"
    assert model["aliases"] == ["Qwen-14B-Chat"]
    assert model["lab"] == {"slug": "qwen", "name": "Qwen"}
    assert (model["releasedOn"], model["capabilityIndexRank"]) == ("2023-09", 213)
    expected = {
        f"code-interpreter-benchmark-{track.lower()}": (
            rank_of("Qwen-14B", track_scores(track)),
            track_scores(track)["Qwen-14B-Chat"],
        )
        for track in TRACKS
    }
    expected["code-interpreter-benchmark"] = (
        rank_of("Qwen-14B", COMBINED_RESULTS),
        COMBINED_RESULTS["Qwen-14B-Chat"],
    )
    results = model["standings"]["nodes"]
    assert model["standings"]["totalCount"] == len(results) == 5
    assert {r["benchmark"]["slug"]: (r["rank"], r["score"]) for r in results} == expected
    assert [r["rank"] for r in results] == sorted(r["rank"] for r in results)
    # GPT-4 tops every one of them; Qwen-14B is the best tracked model on each.
    assert not any(r["leads"] for r in results)
    assert all(r["leadsTrackedModels"] for r in results)


async def test_a_leading_model_leads(graphql: GraphQLClient) -> None:
    model = (await graphql.data(MODEL, slug="kimi-k3"))["model"]
    assert [
        (r["benchmark"]["slug"], r["rank"], r["leads"]) for r in model["standings"]["nodes"]
    ] == [("deepsearchqa", 1, True)]


async def test_standings_page_in_order_and_the_deprecated_results_agree(
    graphql: GraphQLClient,
) -> None:
    everything = (await graphql.data(MODEL, slug="qwen-14b"))["model"]["standings"]["nodes"]
    paged, after = [], None
    while True:
        query = """query($after: String) { model(slug: "qwen-14b") {
            standings(first: 2, after: $after) {
              nodes { benchmark { slug } rank } pageInfo { hasNextPage endCursor } } } }"""
        found = (await graphql.data(query, after=after))["model"]["standings"]
        paged += found["nodes"]
        if not found["pageInfo"]["hasNextPage"]:
            break
        after = found["pageInfo"]["endCursor"]
    assert paged == [{"benchmark": r["benchmark"], "rank": r["rank"]} for r in everything]
    old = await graphql.data('{ model(slug: "qwen-14b") { results(first: 3) { rank } } }')
    assert [r["rank"] for r in old["model"]["results"]] == [r["rank"] for r in everything[:3]]


async def test_unknown_model_is_null(graphql: GraphQLClient) -> None:
    assert (await graphql.data(MODEL, slug="no-such-model"))["model"] is None


async def test_models_by_name(graphql: GraphQLClient) -> None:
    data = await graphql.data("{ models(first: 3) { totalCount nodes { name } } }")
    assert data["models"]["totalCount"] == 8
    assert [n["name"] for n in data["models"]["nodes"]] == [
        "ChatGLM3-6B",
        "Gemini 4 Argon",
        "Gemini 4 Carbon",
    ]


NODE = """
query Node($id: ID!) {
  node(id: $id) {
    __typename id
    ... on Benchmark { slug name }
    ... on Model { slug name }
  }
}
"""


async def test_node_fetches_by_global_id(graphql: GraphQLClient) -> None:
    page = await graphql.data(
        '{ benchmark(slug: "code-interpreter-benchmark-math") { id } model(slug: "qwen-14b") { id } }'
    )
    benchmark_id, model_id = page["benchmark"]["id"], page["model"]["id"]
    assert benchmark_id != "code-interpreter-benchmark-math"  # Opaque, not the slug.
    benchmark = (await graphql.data(NODE, id=benchmark_id))["node"]
    assert benchmark == {
        "__typename": "Benchmark",
        "id": benchmark_id,
        "slug": "code-interpreter-benchmark-math",
        "name": "Code Interpreter Benchmark Math",
    }
    model = (await graphql.data(NODE, id=model_id))["node"]
    assert (model["__typename"], model["slug"]) == ("Model", "qwen-14b")


async def test_node_of_unknown_object_is_null(graphql: GraphQLClient) -> None:
    unknown = ("Benchmark:no-such-benchmark", "Model:no-such-model", "Galaxy:andromeda")
    # No change's ids: "²" is a digit to str.isdigit but not to int, and 10^20 is past a 64-bit
    # integer (both answered INTERNAL_SERVER_ERROR); the others are not as an id writes them.
    changes = ["²", "99999999999999999999", "999999999999999999", "0", "-1", "01", " 1", "1.0"]
    for raw in (*unknown, *(f"Change:{number}" for number in changes)):
        global_id = base64.b64encode(raw.encode()).decode()
        assert (await graphql.data(NODE, id=global_id))["node"] is None, raw
    newest = await graphql.data("{ changes(last: 1) { nodes { id sequence } } }")
    [change] = newest["changes"]["nodes"]
    found = await graphql.data("query($id: ID!) { node(id: $id) { id } }", id=change["id"])
    assert found["node"] == {"id": change["id"]}
    assert base64.b64decode(change["id"]).decode() == f"Change:{change['sequence']}"
