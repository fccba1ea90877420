"""`dryRun` on every mutation: the same checks and the same answer, and nothing written."""

from typing import Any

import pytest

from store import Store
from tests.conftest import GraphQLClient, snapshot
from tests.http.reads.test_leaderboard_reads import GENERAL, SEEDED

RECORD = """
mutation($slug: String!, $input: LeaderboardReadInput!, $dry: Boolean!, $expected: Int) {
  recordLeaderboardRead(benchmark: $slug, input: $input, dryRun: $dry, expectedRevision: $expected) {
    recorded
    read { readOn entryCount added { modelName score } removed { modelName } changed { modelName before after } }
    benchmark { revision leader { modelName score } trackedLeader { modelName score } }
    before { revision leader { modelName score } trackedLeader { modelName score } }
  }
}"""
BUNDLED = "version 20231206"  # the bundled read's setting
ROWS = [
    {"modelName": "Qwen-14B-Chat", "setting": BUNDLED, "score": 70.0},
    {"modelName": "GPT-4 (snapshot unspecified)", "setting": BUNDLED, "score": 82.8},
]


async def record(admin: GraphQLClient, dry: bool, **more: Any) -> Any:
    read = {"readOn": "2026-11-20", "entries": ROWS, "allowRemovals": True}
    variables = {"slug": GENERAL, "input": read, "dry": dry}
    return await admin(RECORD, **variables, **more)


async def test_a_dry_read_answers_what_the_read_would_do_and_writes_nothing(
    admin: GraphQLClient, store: Store
) -> None:
    stored = await snapshot(store)
    dry = await record(admin, True)
    assert await snapshot(store) == stored
    payload = dry["data"]["recordLeaderboardRead"]
    assert payload["read"]["added"] == []  # both rows were on the leaderboard already
    assert payload["read"]["changed"] == [
        {"modelName": "Qwen-14B-Chat", "before": 65.5, "after": 70.0}
    ]
    assert len(payload["read"]["removed"]) > 0
    assert payload["before"]["revision"] == SEEDED
    assert payload["before"]["trackedLeader"] == {"modelName": "Qwen-14B", "score": 65.5}
    assert payload["benchmark"]["trackedLeader"] == {"modelName": "Qwen-14B", "score": 70.0}
    # Done for real, the answer is the one the dry run gave.
    assert (await record(admin, False))["data"] == dry["data"]
    assert await snapshot(store) != stored


async def test_a_dry_run_is_refused_as_the_change_would_be(admin: GraphQLClient) -> None:
    stale = await record(admin, True, expected=SEEDED - 1)
    assert stale["errors"][0]["extensions"]["code"] == "CONFLICT"
    taken = await admin(
        'mutation { createLab(input: {slug: "qwen", name: "Again"}, dryRun: true) { slug } }'
    )
    assert taken["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"


async def test_a_dry_run_needs_an_admin_key_too(graphql: GraphQLClient) -> None:
    body = await graphql(
        RECORD, slug=GENERAL, input={"readOn": "2026-11-20", "entries": ROWS}, dry=True
    )
    assert body["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"


@pytest.mark.parametrize(
    ("mutation", "answer"),
    [
        (
            f'mutation {{ updateBenchmark(slug: "{GENERAL}", input: {{name: "Renamed"}}, dryRun: true) {{ name revision }} }}',
            {"updateBenchmark": {"name": "Renamed", "revision": SEEDED + 1}},
        ),
        (
            'mutation { createModel(slug: "new-model", input: {name: "New Model"}, dryRun: true) { slug name } }',
            {"createModel": {"slug": "new-model", "name": "New Model"}},
        ),
        (
            'mutation { updateModel(slug: "qwen-14b", input: {aliases: ["Qwen-14B-Chat", "Q14"]}, dryRun: true) { aliases } }',
            {"updateModel": {"aliases": ["Qwen-14B-Chat", "Q14"]}},
        ),
        (
            'mutation { createCategory(input: {slug: "new-category", name: "New"}, dryRun: true) { slug benchmarkCount } }',
            {"createCategory": {"slug": "new-category", "benchmarkCount": 0}},
        ),
        (
            'mutation { createBenchmark(slug: "new-one", input: {name: "New", category: "tool-use", metric: {name: "Accuracy", unit: PERCENT}}, dryRun: true) { slug entryCount } }',
            {"createBenchmark": {"slug": "new-one", "entryCount": 0}},
        ),
    ],
)
async def test_every_mutation_answers_a_dry_run_and_writes_nothing(
    admin: GraphQLClient, store: Store, mutation: str, answer: dict[str, Any]
) -> None:
    stored = await snapshot(store)
    body = await admin(mutation)
    assert body.get("data") == answer, body
    assert await snapshot(store) == stored
