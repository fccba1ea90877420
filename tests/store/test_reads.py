"""What a write touches and what a read depends on, seen where it counts: a kept answer is
answered anew after a write that changed what it shows, and a change names, in its purge keys,
what it touched (store.subjects, store.reads)."""

import base64
from collections import Counter
from typing import Any

import httpx
import pytest

from tests.conftest import GraphQLClient
from tests.http.reads.test_answer_reuse import warm

CREATE_BENCHMARK = """mutation($slug: String!, $input: BenchmarkInput!) {
  createBenchmark(slug: $slug, input: $input) { slug } }"""
UPDATE_BENCHMARK = """mutation($slug: String!, $input: BenchmarkInput!) {
  updateBenchmark(slug: $slug, input: $input) { revision } }"""
UPDATE_MODEL = """mutation($slug: String!, $input: ModelInput!) {
  updateModel(slug: $slug, input: $input) { revision } }"""
RECORD_READ = """mutation($slug: String!, $input: LeaderboardReadInput!) {
  recordLeaderboardRead(benchmark: $slug, input: $input) { recorded } }"""
LAST_CHANGE = "{ changes(last: 1) { nodes { kind slug purgeKeys } } }"
METRIC = {"name": "Accuracy", "unit": "PERCENT"}


def rows(*scored: tuple[str, float], on: str = "2026-11-01") -> list[dict[str, Any]]:
    return [
        {"modelName": name, "score": score, "setting": "v1", "publishedOn": on}
        for name, score in scored
    ]


async def answer(client: httpx.AsyncClient, query: str) -> Any:
    body = (await client.post("/graphql", json={"query": query})).json()
    assert "errors" not in body, body
    return body["data"]


@pytest.fixture
async def far(admin: GraphQLClient) -> GraphQLClient:
    """A category of its own with two boards (far-a, far-b), both listing the tracked model
    `far-model` (first on far-a, second on far-b) and an untracked `Near-7B`, and a tracked
    model no board lists (`spare-model`): what no answer about the bundled benchmarks reads.
    The admin client."""
    await admin.data(
        'mutation { createCategory(input: {slug: "elsewhere", name: "Elsewhere"}) { slug } }'
    )
    for slug, name in [("far-model", "Far Model"), ("spare-model", "Spare Model")]:
        await admin.data(
            "mutation($slug: String!, $name: String!) { createModel(slug: $slug, "
            "input: {name: $name}) { slug } }",
            slug=slug,
            name=name,
        )
    for slug, far_score, near_score in [("far-a", 90.0, 80.0), ("far-b", 70.0, 75.0)]:
        name = slug.replace("-", " ").title()
        await admin.data(
            CREATE_BENCHMARK,
            slug=slug,
            input={"name": name, "metric": METRIC, "category": "elsewhere"},
        )
        entries = rows(("Far Model", far_score), ("Near-7B", near_score))
        await admin.data(RECORD_READ, slug=slug, input={"readOn": "2026-11-02", "entries": entries})
    return admin


async def test_a_benchmark_not_found_is_answered_anew_once_it_is_created(
    client: httpx.AsyncClient, calls: Counter[str], far: GraphQLClient
) -> None:
    missing = '{ benchmark(slug: "far-c") { name } }'
    await warm(client, calls, missing)
    assert await answer(client, missing) == {"benchmark": None}
    await far.data(
        CREATE_BENCHMARK,
        slug="far-c",
        input={"name": "Far C", "metric": METRIC, "category": "elsewhere"},
    )
    assert await answer(client, missing) == {"benchmark": {"name": "Far C"}}


async def test_a_tracked_model_leaving_a_board_not_shown_retires_its_standings(
    client: httpx.AsyncClient, calls: Counter[str], far: GraphQLClient
) -> None:
    standings = (
        '{ model(slug: "far-model") { standings(first: 1) '
        "{ totalCount nodes { rank benchmark { slug } } } } }"
    )
    await warm(client, calls, standings)
    shown = {"totalCount": 2, "nodes": [{"rank": 1, "benchmark": {"slug": "far-a"}}]}
    assert (await answer(client, standings))["model"]["standings"] == shown
    # A newer read of far-b without it: far-b is not shown, only counted.
    entries = rows(("Near-7B", 76.0), on="2026-11-20")
    await far.data(
        RECORD_READ,
        slug="far-b",
        input={"readOn": "2026-11-21", "entries": entries, "allowRemovals": True},
    )
    left = (await answer(client, standings))["model"]["standings"]
    assert left == {**shown, "totalCount": 1}


async def test_a_rename_keeping_the_count_of_names_retires_the_rows_it_now_names(
    client: httpx.AsyncClient, calls: Counter[str], far: GraphQLClient
) -> None:
    node_id = base64.b64encode(b"Benchmark:far-a").decode()
    board = '{ node(id: "%s") { ... on Benchmark { leaderboard { modelName model { slug } } } } }'
    board %= node_id
    await warm(client, calls, board)
    before = (await answer(client, board))["node"]["leaderboard"]
    assert before == [
        {"modelName": "Far Model", "model": {"slug": "far-model"}},
        {"modelName": "Near-7B", "model": None},
    ]
    # One name for one name, of a model the board did not name: the tracked models' names
    # changed, not their count.
    await far.data(UPDATE_MODEL, slug="spare-model", input={"name": "Near-7B"})
    after = (await answer(client, board))["node"]["leaderboard"]
    assert after == [before[0], {"modelName": "Near-7B", "model": {"slug": "spare-model"}}]


async def test_a_family_move_names_both_families_in_its_purge_keys(
    client: httpx.AsyncClient, far: GraphQLClient
) -> None:
    await far.data(UPDATE_BENCHMARK, slug="far-b", input={"parent": "far-a"})
    [joined] = (await answer(client, LAST_CHANGE))["changes"]["nodes"]
    assert {"family:far-a", "benchmark:far-b"} <= set(joined["purgeKeys"])
    await far.data(UPDATE_BENCHMARK, slug="far-b", input={"parent": None})
    [left] = (await answer(client, LAST_CHANGE))["changes"]["nodes"]
    assert {"family:far-a", "family:far-b"} <= set(left["purgeKeys"])


async def test_a_benchmark_newly_listing_a_model_names_the_listings_in_its_purge_keys(
    client: httpx.AsyncClient, far: GraphQLClient
) -> None:
    entries = rows(("Far Model", 91.0), ("Near-7B", 81.0), ("Other-3B", 10.0), on="2026-11-20")
    await far.data(RECORD_READ, slug="far-a", input={"readOn": "2026-11-21", "entries": entries})
    [listed] = (await answer(client, LAST_CHANGE))["changes"]["nodes"]
    assert "listings" in listed["purgeKeys"]
    # The same models, other scores: no listing moved.
    entries = rows(("Far Model", 92.0), ("Near-7B", 82.0), ("Other-3B", 11.0), on="2026-11-21")
    await far.data(RECORD_READ, slug="far-a", input={"readOn": "2026-11-22", "entries": entries})
    [rescored] = (await answer(client, LAST_CHANGE))["changes"]["nodes"]
    assert "listings" not in rescored["purgeKeys"]
