"""Bulk import on the store: all-or-nothing per benchmark, idempotent, lossless (the export
has tests/editing/test_export.py)."""

import copy
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import editing.importer
from editing.changes import Stamp
from editing.dataset import (
    CSV_COLUMNS,
    dataset_from_csv,
    dataset_lines,
    read_dataset,
)
from editing.export import export_dataset
from editing.importer import import_dataset
from store import Store
from store.mongo import MongoStore
from store.sqlite import SqliteStore
from store.sqlite.rows import replace_row as sqlite_replace
from tests.conftest import empty_store, snapshot

STAMP = Stamp(by="importer", at=datetime(2026, 11, 29, 12, 0, tzinfo=UTC))
TRACKS = [
    "code-interpreter-benchmark-math",
    "code-interpreter-benchmark-visualization-hard",
    "code-interpreter-benchmark-visualization-easy",
    "code-interpreter-benchmark-general",
]


async def test_importing_the_same_file_again_changes_nothing(store: Store) -> None:
    dataset = with_new_reads(await export_dataset(store), TRACKS)
    first = await import_dataset(store, dataset, STAMP)
    assert first.count("updated") == 4
    before = await snapshot(store)
    again = await import_dataset(store, dataset, STAMP)
    assert again.count("created") == again.count("updated") == again.count("rejected") == 0
    assert await snapshot(store) == before


async def test_a_dry_run_reports_and_writes_nothing(store: Store) -> None:
    dataset = with_new_reads(await export_dataset(store), TRACKS)
    dataset["labs"].append({"slug": "acme", "name": "Acme"})
    before = await snapshot(store)
    planned = await import_dataset(store, dataset, STAMP, dry_run=True)
    assert await snapshot(store) == before
    done = await import_dataset(store, dataset, STAMP)
    assert [(o.section, o.key, o.result) for o in planned.outcomes if o.section != "site"] == [
        (o.section, o.key, o.result) for o in done.outcomes if o.section != "site"
    ]
    assert planned.count("created") == 1
    assert planned.count("updated") == 4


async def test_a_bad_item_is_rejected_with_its_reason_and_the_rest_imported(
    store: Store,
) -> None:
    dataset = with_new_reads(await export_dataset(store), TRACKS)
    bad = next(b for b in dataset["benchmarks"] if b["slug"] == TRACKS[0])
    bad["reads"][-1]["entries"][3]["score"] = 150
    dataset["models"].append({"slug": "impostor", "name": "Impostor", "aliases": ["Qwen-14B-Chat"]})
    dataset["benchmarks"].append({"slug": "Not A Slug", "name": "x"})
    before = await store.benchmarks_by_slugs([TRACKS[0]])

    summary = await import_dataset(store, dataset, STAMP)
    reasons = {o.key: o.reason for o in summary.rejected}
    assert reasons == {
        TRACKS[0]: "reads[1].entries[3].score: 150.0 is outside 0-100 for PERCENT",
        "impostor": "aliases[0]: 'Qwen-14B-Chat' already belongs to model 'qwen-14b'",
        "Not A Slug": (
            "slug: 'Not A Slug' is not a slug: a slug holds lowercase letters a-z and digits, in "
            "words joined by single hyphens (e.g. 'qwen-14b')"
        ),
    }
    assert summary.count("updated") == 3
    assert await store.benchmarks_by_slugs([TRACKS[0]]) == before


async def test_a_failure_part_way_leaves_no_half_updated_benchmark(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset = with_new_reads(await export_dataset(store), TRACKS)
    for benchmark in dataset["benchmarks"]:
        if benchmark["slug"] in TRACKS:
            benchmark["note"] = "Re-read in November."
    old = {doc["slug"]: doc for doc in await store.benchmarks_by_slugs(TRACKS)}

    # The database fails on the third benchmark write: inside the batch's transaction on
    # SQLite (which then writes none of the batch), after two single writes on MongoDB.
    writes = 0

    def fail_on_the_third(write: Any) -> Any:
        def failing(*args: Any, **kwargs: Any) -> Any:
            nonlocal writes
            writes += 1
            if writes == 3:
                raise ConnectionError("connection reset by the database")
            return write(*args, **kwargs)

        return failing

    if isinstance(store, SqliteStore):
        monkeypatch.setattr("store.sqlite.documents.replace_row", fail_on_the_third(sqlite_replace))
    else:
        assert isinstance(store, MongoStore)
        monkeypatch.setattr(store, "_replace", fail_on_the_third(store._replace))
    _, logged = await store.change_bounds()
    with pytest.raises(ConnectionError):
        await import_dataset(store, dataset, STAMP)

    states = {doc["slug"]: doc for doc in await store.benchmarks_by_slugs(TRACKS)}
    updated = [slug for slug in TRACKS if states[slug] != old[slug]]
    assert len(updated) == (0 if isinstance(store, SqliteStore) else 2)
    # The change log holds what was written, and only that.
    assert sorted(change.slug or "" for change in await store.changes_after(logged, 10)) == sorted(
        updated
    )
    for slug in TRACKS:
        doc = states[slug]
        if slug in updated:  # Both its new note and its new read, at one new revision.
            assert doc["note"] == "Re-read in November."
            assert len(doc["history"]) == 2
            assert doc["scores_refreshed_on"] == "2026-11-28"
            assert doc["revision"] == old[slug]["revision"] + 2
        else:
            assert doc == old[slug]

    monkeypatch.undo()
    rerun = await import_dataset(store, dataset, STAMP)
    assert rerun.count("updated") == 4 - len(updated)
    assert rerun.count("rejected") == 0
    finished = {doc["slug"]: doc for doc in await store.benchmarks_by_slugs(TRACKS)}
    assert all(len(doc["history"]) == 2 for doc in finished.values())
    assert all(doc["note"] == "Re-read in November." for doc in finished.values())


async def test_csv_rows_become_one_read_per_benchmark_and_day(store: Store) -> None:
    text = (
        "benchmark,read_on,model_name,setting,score,published_on\n"
        f"{TRACKS[3]},2026-11-20,Qwen-14B-Chat,v2,70.5,2026-11-19\n"
        f"{TRACKS[3]},2026-11-20,GPT-4 (snapshot unspecified),v2,85,2026-11-19\n"
        f"{TRACKS[3]},2026-11-25,Qwen-14B-Chat,v2,71,2026-11-24\n"
        f"{TRACKS[0]},2026-11-20,Qwen-14B-Chat,v2,abc,\n"
    )
    # Two rows of a longer leaderboard: the import says the rest were dropped.
    summary = await import_dataset(store, dataset_from_csv(text), STAMP, allow_removals=True)
    reasons = {o.key: o.reason for o in summary.rejected}
    assert reasons == {
        TRACKS[
            0
        ]: "line[5].score: Input should be a valid number, unable to parse string as a number"
    }
    [general] = await store.benchmarks_by_slugs([TRACKS[3]])
    assert [read["read_on"] for read in general["history"]] == [
        "2026-11-12",
        "2026-11-20",
        "2026-11-25",
    ]
    assert general["entries"][0]["score"] == 71.0


async def test_the_reads_that_can_be_read_are_checked_beside_one_that_cannot(
    store: Store,
) -> None:
    """A read refused for its format leaves the rules of the benchmark's other reads checked:
    their scores' range by the unit stored or given, one row per tracked model (under any of
    its names) and setting; with no unit known, only the format is said."""
    unreadable = {"read_on": "2026-11-20", "entries": [{"model_name": "M", "score": "abc"}]}
    twice = [
        {"model_name": "Qwen-14B-Chat", "score": 150},
        {"model_name": "Qwen-14B", "score": 50},  # the same tracked model, by its own name
    ]
    new = {"name": "New", "metric": {"name": "Accuracy", "unit": "PERCENT"}, "category": "tool-use"}
    below = [{"model_name": "M", "score": -1}]
    dataset = {
        "format": "benchmark-almanac/1",
        "benchmarks": [
            {"slug": TRACKS[0], "reads": [unreadable, {"read_on": "2026-11-21", "entries": twice}]},
            {
                "slug": "new-bench",
                **new,
                "reads": [unreadable, {"read_on": "2026-11-21", "entries": below}],
            },
            {"slug": "no-unit", "reads": [unreadable, {"read_on": "2026-11-21", "entries": below}]},
        ],
    }
    before = await export_dataset(store)

    summary = await import_dataset(store, dataset, STAMP)
    reasons = {o.key: (o.reason or "").split("; ") for o in summary.rejected}
    unparsed = (
        "reads[0].entries[0].score: Input should be a valid number, unable to parse string as a "
        "number"
    )
    assert reasons == {
        TRACKS[0]: [
            unparsed,
            "reads[1].entries[0].score: 150.0 is outside 0-100 for PERCENT",
            "reads[1].entries[1]: repeats row 0: one row per model and setting "
            "('Qwen-14B', setting None)",
        ],
        "new-bench": [unparsed, "reads[1].entries[0].score: -1.0 is outside 0-100 for PERCENT"],
        "no-unit": [unparsed],
    }
    assert await export_dataset(store) == before


def with_new_reads(dataset: dict[str, Any], slugs: list[str]) -> dict[str, Any]:
    """The dataset with one more read for each of `slugs`: every score one point lower."""
    changed = copy.deepcopy(dataset)
    for benchmark in changed["benchmarks"]:
        if benchmark["slug"] in slugs:
            latest = benchmark["reads"][-1]["entries"]
            rows = [{**row, "score": max(row["score"] - 1, 0)} for row in latest]
            benchmark["reads"].append({"read_on": "2026-11-28", "entries": rows})
    return changed


def test_the_editor_guide_documents_every_csv_column() -> None:
    guide = (Path(__file__).parents[2] / "docs" / "editors.md").read_text(encoding="utf-8")
    assert ",".join(CSV_COLUMNS) in guide


async def test_a_partial_read_is_refused_naming_the_rows_it_leaves_out(store: Store) -> None:
    """The mistake of a two-row CSV meant to add rows: it would replace the whole leaderboard."""
    before = await export_dataset(store)
    [general] = await store.benchmarks_by_slugs([TRACKS[3]])
    left_out = len(general["entries"]) - 1  # all but Qwen-14B-Chat's row
    text = (
        "benchmark,read_on,model_name,setting,score\n"
        f"{TRACKS[3]},2026-11-20,Qwen-14B-Chat,version 20231206,70.5\n"
        f"{TRACKS[3]},2026-11-20,New Model,v1,10\n"
    )
    summary = await import_dataset(store, dataset_from_csv(text), STAMP)
    [refused] = summary.rejected
    assert refused.key == TRACKS[3]
    assert refused.reason is not None
    assert f"leaves out {left_out} rows of the current leaderboard ('GPT-4" in refused.reason
    assert await export_dataset(store) == before


async def test_an_ndjson_file_is_imported_a_batch_at_a_time(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read a line at a time, its benchmarks fetched from the store a batch at a time (parents,
    then tracks), never all at once; and it gives the same almanac as the dataset whole."""
    exported = await export_dataset(store)
    path = tmp_path / "almanac.ndjson"
    path.write_text("".join(json.dumps(line) + "\n" for line in dataset_lines(exported)))
    monkeypatch.setattr(editing.importer, "BATCH_SIZE", 4)
    fresh = await empty_store("sqlite", tmp_path / "fresh")
    fetched: list[int] = []
    fetch = fresh.benchmarks_by_slugs

    async def counted(slugs: list[str]) -> list[Any]:
        fetched.append(len(slugs))
        return await fetch(slugs)

    monkeypatch.setattr(fresh, "benchmarks_by_slugs", counted)
    summary = await import_dataset(fresh, read_dataset(path), STAMP)
    assert not summary.rejected
    assert await export_dataset(fresh) == exported
    tracks = sum(1 for b in exported["benchmarks"] if b["parent"] is not None)
    parents = len(exported["benchmarks"]) - tracks
    assert fetched == in_fours(parents) + in_fours(tracks)
    await fresh.close()


def in_fours(count: int) -> list[int]:
    return [4] * (count // 4) + ([count % 4] if count % 4 else [])
