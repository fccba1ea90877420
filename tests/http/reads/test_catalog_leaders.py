"""A catalog row's leaders come from its benchmark's summary (no entry is read), and show what
the benchmark's own page shows: after a write of the benchmark, after a change of the tracked
models (a new one, a rename, an alias dropped), and for a summary stored before leaders were."""

import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest

from editing.importer import seed
from server.app import create_app
from server.settings import Settings
from store import Store
from store.client import connect
from store.documents import BenchmarkSummaryDoc
from store.queries import SUMMARY_LEFT_OUT, BenchmarkFilter
from store.sqlite import DATABASE_FILE, SqliteStore
from tests.conftest import GraphQLClient, http_client
from tests.http.reads.test_answer_reuse import RECORD_READ, UPDATE_MODEL

GENERAL = "code-interpreter-benchmark-general"
ROW = """rank modelName listedAs tracked model { slug name } setting score source publishedOn
  note standardError sampleSize interval { low high level computed } rankRange { best worst }
  tiedWithLeader reportedBy selfReported releasedAfterTestSet"""
SHOWN = f"slug name leader {{ {ROW} }} trackedLeader {{ {ROW} }} headroom nearCeiling"
CATALOG = f"{{ benchmarks(first: 100) {{ totalCount nodes {{ {SHOWN} }} }} }}"
PAGE = f"query($slug: String!) {{ benchmark(slug: $slug) {{ {SHOWN} }} }}"
# Fields a summary cannot answer: each loads the whole document, through the request's loader.
MORE = """slug entryCount trackedModelCount modelCardReports { totalCount }
  leaderboard(first: 3) { modelName rank }
  leaders(excludeSelfReported: true) { modelName }
  trackedLeaders(reportedBy: [BENCHMARK_MAINTAINER]) { modelName }
  leader(asOf: "2000-01-01") { modelName }
  strongestModelTested { slug } scoresOverTime(last: 2) { score }"""
CREATE_MODEL = """mutation($slug: String!, $input: ModelInput!) {
  createModel(slug: $slug, input: $input) { slug } }"""


async def catalog_as_pages_show_it(graphql: GraphQLClient) -> dict[str, Any]:
    """Every catalog row, by slug, each checked against its benchmark's page."""
    nodes = (await graphql.data(CATALOG))["benchmarks"]["nodes"]
    assert len(nodes) == 11
    for node in nodes:
        page = (await graphql.data(PAGE, slug=node["slug"]))["benchmark"]
        assert node == page, node["slug"]
    return {node["slug"]: node for node in nodes}


def tracked_leader(rows: dict[str, Any]) -> dict[str, Any]:
    found = rows[GENERAL]["trackedLeader"]
    return {"modelName": found["modelName"], "score": found["score"]}


async def test_every_row_shows_the_leaders_its_page_shows(graphql: GraphQLClient) -> None:
    rows = await catalog_as_pages_show_it(graphql)
    assert tracked_leader(rows) == {"modelName": "Qwen-14B", "score": 65.5}
    assert rows[GENERAL]["leader"]["modelName"] == "GPT-4 (snapshot unspecified)"


async def test_a_catalog_page_reads_summaries_and_no_entry(
    store: Store,
    client: httpx.AsyncClient,
    calls: Counter[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What the store hands the catalog holds no leaderboard; the leaders' models come in one
    more call; on SQLite no statement reads a benchmark's document."""
    handed: list[BenchmarkSummaryDoc] = []
    page = store.benchmark_page

    async def noted(*args: Any) -> Any:
        found = await page(*args)
        handed.extend(found[0])
        return found

    monkeypatch.setattr(store, "benchmark_page", noted)
    statements: list[str] = []
    if isinstance(store, SqliteStore):
        await store.watch_statements(statements.append)
    body = (await client.post("/graphql", json={"query": CATALOG})).json()
    if isinstance(store, SqliteStore):
        await store.watch_statements(None)
    assert "errors" not in body, body
    assert len(handed) == 11
    assert all("leaders" in doc for doc in handed)
    assert not [field for doc in handed for field in SUMMARY_LEFT_OUT if field in doc]
    assert dict(calls) == {"benchmark_page": 1, "models_by_slugs": 1}
    read_benchmarks = [s for s in statements if "FROM benchmarks" in s and "SELECT" in s]
    if isinstance(store, SqliteStore):
        assert read_benchmarks
        assert not [s for s in read_benchmarks if "doc" in s.split("FROM")[0]], read_benchmarks


@pytest.mark.parametrize(
    ("query", "models_loaded"),
    [
        ("{ benchmarks(first: 100) { nodes { slug name } } }", 0),
        ("{ benchmarks(first: 100) { nodes { trackedLeader { modelName } } } }", 1),
        (
            "{ benchmarks(first: 100) { edges { node { ...Row } } } }"
            " fragment Row on Benchmark { ... on Benchmark { leader { modelName } } }",
            1,
        ),
    ],
)
async def test_a_catalog_loads_its_leaders_models_only_when_it_shows_them(
    graphql: GraphQLClient, calls: Counter[str], query: str, models_loaded: int
) -> None:
    await graphql.data(query)
    assert dict(calls) == {"benchmark_page": 1} | (
        {"models_by_slugs": models_loaded} if models_loaded else {}
    )


async def test_fields_past_the_summary_load_the_whole_documents_once(
    admin: GraphQLClient, calls: Counter[str]
) -> None:
    # Every row (the bundled almanac holds 11), each priced for its `asOf` recomputation: a
    # key's budget holds the catalog and its pages.
    graphql = admin
    rows = (await graphql.data(f"{{ benchmarks(first: 11) {{ nodes {{ {MORE} }} }} }}"))[
        "benchmarks"
    ]["nodes"]
    assert calls["benchmarks_by_slugs"] == 1  # every row's document in one call
    for row in rows:
        page = await graphql.data(
            f"query($slug: String!) {{ benchmark(slug: $slug) {{ {MORE} }} }}", slug=row["slug"]
        )
        assert row == page["benchmark"], row["slug"]
    assert any(row["leaderboard"] for row in rows)


async def test_a_write_to_the_benchmark_moves_its_rows_leaders(admin: GraphQLClient) -> None:
    await catalog_as_pages_show_it(admin)  # answers kept, to be retired by the write
    entries = [
        {"modelName": "Qwen-14B-Chat", "score": 99.0, "setting": "v2", "publishedOn": "2026-11-01"},
        {"modelName": "Unknown-7B", "score": 50.0, "setting": "v1", "publishedOn": "2026-11-01"},
    ]
    await admin.data(
        RECORD_READ,
        slug=GENERAL,
        input={"readOn": "2026-11-20", "entries": entries, "allowRemovals": True},
    )
    rows = await catalog_as_pages_show_it(admin)
    assert tracked_leader(rows) == {"modelName": "Qwen-14B", "score": 99.0}
    assert rows[GENERAL]["leader"]["modelName"] == "Qwen-14B"


async def test_tracked_model_changes_move_the_rows_leaders(admin: GraphQLClient) -> None:
    """A new model naming a row, a rename, an alias dropped: each places the leaders anew, and
    retires the catalog answers kept before it."""
    await catalog_as_pages_show_it(admin)
    await admin.data(
        CREATE_MODEL, slug="qwen-72b", input={"name": "Qwen-72B", "aliases": ["Qwen-72B-Chat"]}
    )
    rows = await catalog_as_pages_show_it(admin)
    assert tracked_leader(rows) == {"modelName": "Qwen-72B", "score": 82.8}

    await admin.data(UPDATE_MODEL, slug="qwen-72b", input={"name": "Qwen 72B Renamed"})
    rows = await catalog_as_pages_show_it(admin)
    assert tracked_leader(rows) == {"modelName": "Qwen 72B Renamed", "score": 82.8}

    await admin.data(UPDATE_MODEL, slug="qwen-72b", input={"aliases": []})  # untracks the row
    await admin.data(UPDATE_MODEL, slug="qwen-14b", input={"aliases": []})
    rows = await catalog_as_pages_show_it(admin)
    assert tracked_leader(rows) == {"modelName": "ChatGLM3-6B", "score": 62.1}
    assert not rows[GENERAL]["leader"]["tracked"]


async def test_a_file_from_before_summaries_is_upgraded_and_served_right(data_dir: Path) -> None:
    """A schema-4 file (no summary column, documents without leaders) opens, each row's summary
    made from its document: its leaders are read off the leaderboard until its next write."""
    made = connect(None, "almanac", data_dir)
    assert isinstance(made, SqliteStore)
    await seed(made)
    await made.close()
    with sqlite3.connect(data_dir / DATABASE_FILE) as connection:
        connection.execute("ALTER TABLE benchmarks DROP COLUMN summary")
        connection.execute(
            "UPDATE benchmarks SET doc = json_remove(CAST(doc AS TEXT), '$.leaders')"
        )
        connection.execute("PRAGMA user_version = 4")

    store = connect(None, "almanac", data_dir)
    app = create_app(Settings(), store)
    try:
        async with http_client(app) as client:
            rows = await catalog_as_pages_show_it(GraphQLClient(client))
        assert tracked_leader(rows) == {"modelName": "Qwen-14B", "score": 65.5}
        summaries, _ = await store.benchmark_page(BenchmarkFilter(), "name", None, 100)
        assert summaries
        assert not [doc for doc in summaries if "leaders" in doc]
    finally:
        await app.services.shared.budgets.close()
        await store.close()
