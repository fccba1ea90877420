"""The change feed: every change to the data, oldest first, from a cursor that holds across
restarts; a copy built from the export is kept current from the cursor the export gives."""

from datetime import timedelta
from typing import Any

import httpx
import pytest

from server.app import create_app
from server.settings import Settings
from store import Store, encode_change_cursor
from store.mongo import MongoStore
from store.sqlite import SqliteStore
from tests.conftest import GraphQLClient, http_client
from tests.store.test_changes import another_process, changed, take_a_number, write_late

GENERAL = "code-interpreter-benchmark-general"
FEED = """query($after: String, $first: Int = 20, $filter: ChangeFilter) {
  changes(after: $after, first: $first, filter: $filter) {
    nodes {
      id sequence at kind slug revision recordedBy
      subject { __typename id ... on Benchmark { slug } ... on Model { slug } }
      read { revision readOn added(first: 5) { modelName } }
      leaderBefore { modelName score } leaderAfter { modelName score }
      trackedLeaderBefore { modelName } trackedLeaderAfter { modelName }
    }
    pageInfo { hasNextPage endCursor }
  }
}"""
RECORD = """mutation($slug: String!, $input: LeaderboardReadInput!) {
  recordLeaderboardRead(benchmark: $slug, input: $input) { recorded } }"""
UPDATE_MODEL = """mutation($slug: String!, $input: ModelInput!) {
  updateModel(slug: $slug, input: $input) { revision } }"""
ROWS = [
    {"modelName": "Qwen-14B-Chat", "score": 99.0, "setting": "v1", "publishedOn": "2026-11-01"},
    {"modelName": "New-Model-7B", "score": 50.0, "setting": "v1", "publishedOn": "2026-11-01"},
]

READ = {"readOn": "2026-11-20", "entries": ROWS, "allowRemovals": True}


async def export_cursor(client: httpx.AsyncClient) -> str:
    exported = await client.get("/export.ndjson")
    assert exported.status_code == 200
    return exported.headers["Almanac-Changes-Cursor"]


async def every_change(graphql: GraphQLClient, after: str, **more: Any) -> list[dict[str, Any]]:
    """Every change after `after`, paged through two at a time."""
    found: list[dict[str, Any]] = []
    while True:
        page = (await graphql.data(FEED, after=after, first=2, **more))["changes"]
        found += page["nodes"]
        after = page["pageInfo"]["endCursor"]
        if not page["pageInfo"]["hasNextPage"]:
            return found


async def test_a_copy_from_the_export_is_kept_current_from_its_cursor(
    client: httpx.AsyncClient, graphql: GraphQLClient, admin: GraphQLClient
) -> None:
    cursor = await export_cursor(client)
    assert await every_change(graphql, cursor) == []
    await admin.data(RECORD, slug=GENERAL, input=READ)
    await admin.data(UPDATE_MODEL, slug="qwen-14b", input={"capabilityIndexRank": 99})

    read, model = await every_change(graphql, cursor)
    assert read["sequence"] < model["sequence"]
    assert (read["kind"], read["slug"], read["recordedBy"]) == ("READ_RECORDED", GENERAL, "editor")
    assert read["subject"]["__typename"] == "Benchmark"
    assert read["subject"]["slug"] == GENERAL
    assert read["read"]["revision"] == read["revision"]
    assert "New-Model-7B" in [row["modelName"] for row in read["read"]["added"]]
    assert read["leaderBefore"]["score"] == 82.8  # the bundled read's leader
    assert read["leaderAfter"] == {"modelName": "Qwen-14B", "score": 99.0}
    assert read["trackedLeaderAfter"] == {"modelName": "Qwen-14B"}
    assert (model["kind"], model["subject"]["slug"]) == ("MODEL_UPDATED", "qwen-14b")
    assert model["read"] is None
    assert model["leaderAfter"] is None

    found = await graphql.data("query($id: ID!) { node(id: $id) { id } }", id=model["id"])
    assert found["node"] == {"id": model["id"]}


async def test_the_feed_filters_by_kind_benchmark_and_category(
    graphql: GraphQLClient, admin: GraphQLClient, store: Store
) -> None:
    start = encode_change_cursor((await store.change_bounds())[1])
    await admin.data(RECORD, slug=GENERAL, input=READ)
    await admin.data(UPDATE_MODEL, slug="qwen-14b", input={"capabilityIndexRank": 99})

    def kinds(changes: list[dict[str, Any]]) -> list[str]:
        return [change["kind"] for change in changes]

    assert kinds(await every_change(graphql, start, filter={"kinds": ["MODEL_UPDATED"]})) == [
        "MODEL_UPDATED"
    ]
    assert kinds(await every_change(graphql, start, filter={"benchmarks": [GENERAL]})) == [
        "READ_RECORDED"
    ]
    assert kinds(await every_change(graphql, start, filter={"models": ["qwen-14b"]})) == [
        "MODEL_UPDATED"
    ]
    assert kinds(await every_change(graphql, start, filter={"category": "tool-use"})) == [
        "READ_RECORDED"
    ]
    assert await every_change(graphql, start, filter={"category": "elsewhere"}) == []


async def test_a_cursor_holds_across_a_restart(store: Store, admin: GraphQLClient) -> None:
    start = encode_change_cursor((await store.change_bounds())[1])
    await admin.data(RECORD, slug=GENERAL, input=READ)
    await admin.data(UPDATE_MODEL, slug="qwen-14b", input={"capabilityIndexRank": 99})
    before = await every_change(admin, start)
    restarted = another_process(store)
    app = create_app(Settings(), restarted)
    try:
        async with http_client(app) as client:
            after = await every_change(GraphQLClient(client), start)
    finally:
        await app.services.shared.budgets.close()
        if isinstance(restarted, SqliteStore):
            await restarted.close()
    assert len(before) == 2
    assert after == before


async def test_a_cursor_past_the_retention_is_refused_with_where_to_start(
    store: Store, graphql: GraphQLClient
) -> None:
    start = encode_change_cursor((await store.change_bounds())[1] - 1)
    pruning = another_process(store, retention=timedelta(0))
    await changed(pruning, GENERAL, note="Checked again.")  # every older change pruned

    refused = await graphql(FEED, after=start)
    [error] = refused["errors"]
    assert error["extensions"]["code"] == "CURSOR_EXPIRED"
    assert "/export.ndjson" in error["message"]
    assert "Almanac-Changes-Cursor" in error["message"]


async def test_a_cursor_not_given_out_is_bad_input(graphql: GraphQLClient) -> None:
    for cursor in ("nonsense", encode_change_cursor(10**9)):
        query = "query($after: String) { changes(after: $after) { nodes { sequence } } }"
        [error] = (await graphql(query, after=cursor))["errors"]
        assert error["extensions"]["code"] == "BAD_USER_INPUT"
        assert "cursor" in error["message"] or "names no change" in error["message"]


async def test_the_feed_on_mongodb_waits_for_a_change_numbered_but_not_yet_written(
    store: Store, graphql: GraphQLClient
) -> None:
    if not isinstance(store, MongoStore):
        pytest.skip("only MongoDB's writers take a number before they write their change")
    after = encode_change_cursor((await store.change_bounds())[1])
    taken = await take_a_number(store)
    await changed(store, GENERAL, note="Written after the number taken.")

    page = (await graphql.data(FEED, after=after))["changes"]
    assert page["nodes"] == []  # the next one, not the one after it: a partner misses nothing
    assert page["pageInfo"]["endCursor"] == after

    await write_late(store, taken)
    await store.follower.catch_up(store.changes_after)  # as the process's follower reads it
    assert [change["sequence"] for change in await every_change(graphql, after)] == [
        taken,
        taken + 1,
    ]


async def test_the_feed_on_mongodb_passes_a_gap_older_than_the_grace(
    store: Store, graphql: GraphQLClient
) -> None:
    if not isinstance(store, MongoStore):
        pytest.skip("only MongoDB's writers take a number before they write their change")
    after = encode_change_cursor((await store.change_bounds())[1])
    taken = await take_a_number(store)  # and its writer dies
    await changed(store, GENERAL, note="Written after the number taken.")
    assert await every_change(graphql, after) == []

    store.gap_seconds = 0.0  # as if the grace had passed since
    await store.follower.catch_up(store.changes_after)  # as the process's follower reads it
    assert [change["sequence"] for change in await every_change(graphql, after)] == [taken + 1]
