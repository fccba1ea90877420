"""Recording leaderboard reads: atomic, idempotent, refused whole when any row is wrong, and
kept in a history that `reads` and `scoresOverTime` show."""

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from editing import export_dataset
from editing.changes import Stamp
from editing.importer import import_dataset
from store import Store
from tests.conftest import STORES, GraphQLClient, empty_store, snapshot

GENERAL = "code-interpreter-benchmark-general"
SEEDED = 2  # Created, then its bundled read.

RECORD = """
mutation($slug: String!, $input: LeaderboardReadInput!, $expected: Int) {
  recordLeaderboardRead(benchmark: $slug, input: $input, expectedRevision: $expected) {
    recorded
    read { revision readOn recordedBy entryCount }
    benchmark { revision scoresRefreshedOn entryCount leader { modelName score } }
  }
}"""
HISTORY = """
query($slug: String!) {
  benchmark(slug: $slug) {
    leaderboard { modelName score }
    reads {
      totalCount
      nodes {
        revision readOn recordedBy entryCount
        added { modelName score } removed { modelName score }
        changed { modelName setting before after }
      }
    }
    scoresOverTime { modelName score date tracked }
  }
}"""


def row(name: str, score: float, on: str = "2026-11-01") -> dict[str, Any]:
    return {"modelName": name, "score": score, "setting": "v1", "publishedOn": on}


FIRST = [row("Qwen-14B-Chat", 60.0), row("GPT-4 (snapshot unspecified)", 80.0)]
SECOND = [row("Qwen-14B-Chat", 66.0, "2026-11-15"), row("GPT-4 (snapshot unspecified)", 80.0)]
THIRD = [row("Qwen-14B-Chat", 66.0, "2026-11-15"), row("ChatGLM3-6B", 70.0, "2026-11-20")]


async def record(
    admin: GraphQLClient,
    on: str,
    entries: list[dict[str, Any]],
    *,
    allow_removals: bool = True,
    **more: Any,
) -> Any:
    """Record a read of GENERAL: these tests' reads are short, leaving out the bundled rows
    (`allowRemovals`), unless told otherwise."""
    read = {"readOn": on, "entries": entries, "allowRemovals": allow_removals}
    return await admin(RECORD, slug=GENERAL, input=read, **more)


async def test_a_read_replaces_the_leaderboard_at_once(admin: GraphQLClient) -> None:
    body = await record(admin, "2026-11-20", FIRST, expected=SEEDED)
    payload = body["data"]["recordLeaderboardRead"]
    assert payload["recorded"] is True
    assert payload["read"] == {
        "revision": SEEDED + 1,
        "readOn": "2026-11-20",
        "recordedBy": "editor",
        "entryCount": 2,
    }
    assert payload["benchmark"] == {
        "revision": SEEDED + 1,
        "scoresRefreshedOn": "2026-11-20",
        "entryCount": 2,
        "leader": {"modelName": "GPT-4 (snapshot unspecified)", "score": 80.0},
    }


async def test_the_same_read_twice_is_recorded_once(admin: GraphQLClient, store: Store) -> None:
    await record(admin, "2026-11-20", FIRST, expected=SEEDED)
    before = await snapshot(store)
    # A retry of the same request, its expected revision now stale: not a conflict, a no-op.
    again = (await record(admin, "2026-11-20", FIRST[::-1], expected=SEEDED))["data"]
    assert again["recordLeaderboardRead"]["recorded"] is False
    assert again["recordLeaderboardRead"]["read"]["revision"] == SEEDED + 1
    assert again["recordLeaderboardRead"]["benchmark"]["revision"] == SEEDED + 1
    assert await snapshot(store) == before


async def test_three_reads_make_a_history_and_every_score_over_time(
    admin: GraphQLClient,
) -> None:
    for on, entries in (("2026-11-13", FIRST), ("2026-11-16", SECOND), ("2026-11-21", THIRD)):
        assert "errors" not in await record(admin, on, entries)
    benchmark = (await admin.data(HISTORY, slug=GENERAL))["benchmark"]

    assert benchmark["leaderboard"] == [
        {"modelName": "ChatGLM3-6B", "score": 70.0},
        {"modelName": "Qwen-14B", "score": 66.0},
    ]
    reads = benchmark["reads"]
    assert reads["totalCount"] == 4  # The bundled read, then these three.
    third, second, first, bundled = reads["nodes"]
    assert [r["readOn"] for r in reads["nodes"]] == [
        "2026-11-21",
        "2026-11-16",
        "2026-11-13",
        "2026-11-12",
    ]
    assert [r["revision"] for r in reads["nodes"]] == [5, 4, 3, 2]
    assert bundled["recordedBy"] == "bundled dataset"
    assert len(bundled["added"]) == bundled["entryCount"] == 10
    assert first["recordedBy"] == "editor"
    assert first["added"] == [
        {"modelName": "Qwen-14B-Chat", "score": 60.0},
        {"modelName": "GPT-4 (snapshot unspecified)", "score": 80.0},
    ]
    assert len(first["removed"]) == 10, "the bundled rows all had another setting"
    assert second["added"] == second["removed"] == []
    assert second["changed"] == [
        {"modelName": "Qwen-14B-Chat", "setting": "v1", "before": 60.0, "after": 66.0}
    ]
    assert third["added"] == [{"modelName": "ChatGLM3-6B", "score": 70.0}]
    assert third["removed"] == [{"modelName": "GPT-4 (snapshot unspecified)", "score": 80.0}]
    assert third["changed"] == []

    points = benchmark["scoresOverTime"]
    # The bundled 10, then Qwen at 60 and re-scored at 66, GPT-4 at 80 once (read twice,
    # same result), ChatGLM3 at 70.
    assert len(points) == 10 + 4
    new = [(p["modelName"], p["score"], p["date"]) for p in points if p["date"] >= "2026"]
    assert new == [
        ("GPT-4 (snapshot unspecified)", 80.0, "2026-11-01"),
        ("Qwen-14B", 60.0, "2026-11-01"),
        ("Qwen-14B", 66.0, "2026-11-15"),
        ("ChatGLM3-6B", 70.0, "2026-11-20"),
    ]
    assert all(p["tracked"] for p in points if p["modelName"] in ("Qwen-14B", "ChatGLM3-6B"))


async def test_reads_page_newest_first(admin: GraphQLClient) -> None:
    await record(admin, "2026-11-13", FIRST)
    await record(admin, "2026-11-16", SECOND)
    query = """query($after: String) { benchmark(slug: "%s") {
        reads(first: 2, after: $after) { nodes { readOn } pageInfo { hasNextPage endCursor } } } }"""
    page = (await admin.data(query % GENERAL))["benchmark"]["reads"]
    assert [n["readOn"] for n in page["nodes"]] == ["2026-11-16", "2026-11-13"]
    rest = await admin.data(query % GENERAL, after=page["pageInfo"]["endCursor"])
    assert [n["readOn"] for n in rest["benchmark"]["reads"]["nodes"]] == ["2026-11-12"]


REFUSED_READS: list[tuple[str, str, list[dict[str, Any]], str]] = [
    ("score over 100%", "2026-11-20", [row("A", 100.5)], "input.entries[0].score"),
    ("score under 0%", "2026-11-20", [row("A", 1), row("B", -0.1)], "input.entries[1].score"),
    ("read in the future", "2999-01-01", [row("A", 1)], "input.readOn"),
    ("read before the last read", "2026-11-01", [row("A", 1)], "input.readOn"),
    ("impossible date", "2026-02-30", [row("A", 1)], "input.readOn"),
    (
        "published in the future",
        "2026-11-20",
        [row("A", 1, "2999-01-01")],
        "input.entries[0].publishedOn",
    ),
    (
        "same model and setting twice",
        "2026-11-20",
        [row("A", 1), row(" a ", 2)],
        "input.entries[1]",
    ),
    ("empty model name", "2026-11-20", [row("", 1)], "input.entries[0].modelName"),
]


@pytest.mark.parametrize(
    ("read_on", "entries", "field"),
    [case[1:] for case in REFUSED_READS],
    ids=[case[0] for case in REFUSED_READS],
)
async def test_a_refused_read_names_the_row_and_writes_nothing(
    admin: GraphQLClient, store: Store, read_on: str, entries: list[dict[str, Any]], field: str
) -> None:
    before = await snapshot(store)
    body = await record(admin, read_on, entries)
    assert body.get("data") is None  # null, or absent when the variables were refused
    [error] = body["errors"]
    assert error["extensions"]["code"] == "BAD_USER_INPUT", error
    assert error["extensions"].get("field", field) == field, error
    assert (
        field.removeprefix("input.") in error["message"] or field.split(".")[-1] in error["message"]
    )
    assert await snapshot(store) == before


@pytest.mark.parametrize(
    "score", ["82.8%", None, "many", True], ids=["text", "missing", "word", "boolean"]
)
async def test_a_non_numeric_or_missing_score_is_bad_input(
    admin: GraphQLClient, store: Store, score: Any
) -> None:
    before = await snapshot(store)
    entries = [row("A", 1), {"modelName": "B", "score": score}]
    body = await record(admin, "2026-11-20", entries)
    [error] = body["errors"]
    assert error["extensions"]["code"] == "BAD_USER_INPUT"
    assert "entries[1].score" in error["message"]
    assert await snapshot(store) == before


async def test_a_read_of_an_unknown_benchmark_is_not_found(admin: GraphQLClient) -> None:
    body = await admin(RECORD, slug="nope", input={"readOn": "2026-11-20", "entries": []})
    assert body["errors"][0]["extensions"]["code"] == "NOT_FOUND"


async def test_a_read_that_leaves_out_rows_is_refused_unless_they_were_dropped(
    admin: GraphQLClient, store: Store
) -> None:
    before = await snapshot(store)
    partial = await record(admin, "2026-11-20", FIRST, allow_removals=False)
    [error] = partial["errors"]
    assert error["extensions"]["code"] == "BAD_USER_INPUT"
    assert error["extensions"]["field"] == "input.entries"
    assert "rows of the current leaderboard ('" in error["message"]
    assert "'InternLM-20B-Chat'" in error["message"]  # a bundled row it leaves out
    assert await snapshot(store) == before
    dropped = await record(admin, "2026-11-20", FIRST, allow_removals=True)
    assert dropped["data"]["recordLeaderboardRead"]["recorded"] is True


@pytest.mark.parametrize("into", STORES)
async def test_a_history_with_rows_dropped_is_restored_from_its_export(
    admin: GraphQLClient, store: Store, into: str, tmp_path: Path
) -> None:
    """Reads that left rows out (`allowRemovals`) come back from an export: a read restored
    with the time it was recorded needs no `allow_removals` of its own."""
    for on, entries in (("2026-11-20", FIRST), ("2026-11-21", THIRD)):
        assert (await record(admin, on, entries))["data"]["recordLeaderboardRead"]["recorded"]
    exported = await export_dataset(store)
    fresh = await empty_store(into, tmp_path / "restored")
    summary = await import_dataset(fresh, exported, Stamp(by="restore", at=datetime.now(UTC)))
    assert summary.rejected == []
    assert await export_dataset(fresh) == exported
    [general] = await fresh.benchmarks_by_slugs([GENERAL])
    assert [read["read_on"] for read in general["history"]] == [
        read["read_on"] for read in (await store.benchmarks_by_slugs([GENERAL]))[0]["history"]
    ]
    assert len(general["history"]) == 3
    await fresh.close()
