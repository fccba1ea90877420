"""The store's writes, as the reads see them: a benchmark's maker kept in the column the lab
filter reads, tracked models placed only on benchmarks still at the revision their places were
worked out from, and a refused insert naming the unique value it collided with. Found by
mutation testing of `store/sqlite/`'s write paths (docs/testing.md)."""

from datetime import UTC, datetime
from pathlib import Path

import pytest

from editing.changes import Catalog, Stamp, changed_benchmark
from editing.importer import seed
from editing.inputs import BenchmarkFields, parse
from store import Store, noting_reads
from store.changes import Change, ChangeKind
from store.documents import CategoryDoc, LeadersDoc, ModelDoc, TrackedRankDoc, YearMonth
from store.queries import SUMMARY_LEFT_OUT, AlreadyExists, BenchmarkFilter, Collection
from store.seed import load_bundled_dataset
from store.sqlite import SqliteStore

GENERAL = "code-interpreter-benchmark-general"
HARD = "code-interpreter-benchmark-visualization-hard"
STAMP = Stamp(by="test", at=datetime(2026, 11, 30, tzinfo=UTC))


async def test_the_lab_filter_finds_the_benchmarks_a_lab_made(store: Store) -> None:
    made = sorted(
        benchmark["slug"]
        for benchmark in load_bundled_dataset()["benchmarks"]
        if benchmark.get("made_by") == "qwen"
    )
    page, total = await store.benchmark_page(BenchmarkFilter(lab="qwen"), "name", None, 100)
    assert made  # the bundled dataset has benchmarks made by a lab, and others
    assert sorted(doc["slug"] for doc in page) == made
    assert total == len(made)


async def test_tracked_models_are_placed_only_where_the_revision_still_holds(
    store: Store,
) -> None:
    general, hard = await store.benchmarks_by_slugs([GENERAL, HARD])
    before, _ = await store.model_results("qwen-14b", 0, 100)
    assert {GENERAL, HARD} <= {doc["slug"] for doc in before}
    placed: list[TrackedRankDoc] = [{"model": "placed-model", "rank": 2}]
    moved = await store.set_tracked_ranks(
        {
            GENERAL: (general["revision"] - 1, placed),  # moved on since: left as it is
            HARD: (hard["revision"], placed),  # placed anew: its old places go
        }
    )
    assert moved == [GENERAL]
    found, total = await store.model_results("placed-model", 0, 100)
    assert [doc["slug"] for doc in found] == [HARD]
    assert total == 1
    after, _ = await store.model_results("qwen-14b", 0, 100)
    assert {doc["slug"] for doc in after} == {doc["slug"] for doc in before} - {HARD}


async def test_new_placements_log_the_models_whose_places_moved_on_every_benchmark(
    store: Store,
) -> None:
    """One change for the call, naming each tracked model that came, went or moved on any of
    its benchmarks, and none whose places stayed (what a kept answer of its standing hangs on)."""
    general, hard = await store.benchmarks_by_slugs([GENERAL, HARD])
    first, *rest = general["tracked_ranks"]
    assert rest  # a model that stays where it was
    moved_on: list[TrackedRankDoc] = [{"model": first["model"], "rank": first["rank"] + 100}]
    moved_on += rest
    joined: list[TrackedRankDoc] = [*hard["tracked_ranks"], {"model": "placed-model", "rank": 50}]
    _, newest = await store.change_bounds()
    await store.set_tracked_ranks(
        {GENERAL: (general["revision"], moved_on), HARD: (hard["revision"], joined)}
    )
    [change] = await store.changes_after(newest, 100)
    assert change.kind is ChangeKind.PLACEMENTS_UPDATED
    assert change.subjects == {f"ranks:{first['model']}", "ranks:placed-model"}

    await store.set_tracked_ranks({GENERAL: (general["revision"], moved_on)})
    assert await store.changes_after(change.sequence, 100) == []


async def test_leaders_placed_anew_reach_the_catalog_and_log_the_rows_they_moved(
    store: Store,
) -> None:
    """Leaders placed with the tracked models land in the summaries a catalog reads (no entry
    with them), at the revision given only; their change names `leaders:<slug>` for the rows
    whose leaders moved, and the catalog's read depends on it."""
    found = {doc["slug"]: doc for doc in await store.benchmarks_by_slugs([GENERAL, HARD])}
    general, hard = found[GENERAL], found[HARD]
    untracked: LeadersDoc = {**general["leaders"], "tracked_leader": None}
    _, newest = await store.change_bounds()
    moved = await store.set_tracked_ranks(
        {
            GENERAL: (general["revision"], general["tracked_ranks"]),
            HARD: (hard["revision"], hard["tracked_ranks"]),
        },
        {GENERAL: untracked, HARD: hard["leaders"]},  # the hard track's stay as they were
    )
    assert moved == []
    [change] = await store.changes_after(newest, 100)
    assert change.kind is ChangeKind.PLACEMENTS_UPDATED
    assert change.subjects == {f"leaders:{GENERAL}"}

    read: set[str] = set()
    rows, _ = await noting_reads(store, read).benchmark_page(BenchmarkFilter(), "name", None, 100)
    assert not [field for row in rows for field in SUMMARY_LEFT_OUT if field in row]
    [row] = [row for row in rows if row["slug"] == GENERAL]
    assert row["leaders"] == untracked
    assert {f"leaders:{GENERAL}", f"benchmark:{GENERAL}", "catalog"} <= read
    [whole] = await store.benchmarks_by_slugs([GENERAL])
    assert whole["leaders"] == untracked  # the document says the same

    stale = {GENERAL: (general["revision"] - 1, general["tracked_ranks"])}
    assert await store.set_tracked_ranks(stale, {GENERAL: general["leaders"]}) == [GENERAL]
    rows, _ = await store.benchmark_page(BenchmarkFilter(), "name", None, 100)
    assert [row["leaders"] for row in rows if row["slug"] == GENERAL] == [untracked]
    assert await store.changes_after(change.sequence, 100) == []


API_KEY = {
    "key_id": "k1",
    "name": "ops",
    "scope": "read",
    "secret_sha256": "0" * 64,
    "created_at": "2026-11-30T00:00:00Z",
    "revoked_at": None,
}


@pytest.mark.parametrize(
    ("collection", "doc", "named"),
    [
        (Collection.LABS, {"slug": "qwen", "name": "Another Qwen"}, {"slug": "qwen"}),
        (Collection.API_KEYS, {**API_KEY, "key_id": "k2"}, {"name": "ops"}),
        (Collection.API_KEYS, {**API_KEY, "name": "other"}, {"key_id": "k1"}),
    ],
)
async def test_a_refused_insert_names_the_value_taken_as_mongodb_does(
    data_dir: Path, collection: Collection, doc: dict[str, object], named: dict[str, str]
) -> None:
    """SQLite only: the key is what MongoDB's error carries as `keyValue`, which mongomock's
    does not carry."""
    store = SqliteStore(data_dir)
    try:
        await seed(store)
        await store.insert(Collection.API_KEYS, API_KEY)
        with pytest.raises(AlreadyExists) as refused:
            await store.insert(collection, doc)
        assert refused.value.key == named
    finally:
        await store.close()


async def test_a_model_refused_for_a_taken_name_names_its_keys(data_dir: Path) -> None:
    store = SqliteStore(data_dir)
    try:
        await seed(store)
        [qwen] = await store.models_by_slugs(["qwen-14b"])
        keys = ["impostor", qwen["keys"][0]]
        impostor = {**qwen, "slug": "impostor", "name": "Impostor", "keys": keys, "revision": 1}
        with pytest.raises(AlreadyExists) as refused:
            await store.insert(Collection.MODELS, impostor)
        assert refused.value.key == {"keys": keys}
    finally:
        await store.close()


async def test_a_site_record_is_replaced_not_inserted(data_dir: Path) -> None:
    """SQLite keeps a site record by its id, so it can only be replaced (MongoDB would take
    the document as any other)."""
    store = SqliteStore(data_dir)
    try:
        with pytest.raises(ValueError, match="no collection named"):
            await store.insert(Collection.SITE, {"_id": "figures"})
    finally:
        await store.close()


async def last_change(store: Store, since: int) -> Change:
    [change] = await store.changes_after(since, 100)
    return change


async def test_each_insert_and_replacement_logs_what_it_changed(store: Store) -> None:
    """A new benchmark touches the catalog, its category, its family and the listings; a new
    API key the keys; a model's own change the model, and its names the models' lookups too."""
    tool_use: CategoryDoc = {"slug": "tool-use", "name": "Tool use"}
    catalog = Catalog(labs={}, categories={"tool-use": tool_use}, parents={})
    fields = parse(
        BenchmarkFields,
        {
            "name": "Fresh",
            "metric": {"name": "Accuracy", "unit": "PERCENT"},
            "category": "tool-use",
        },
    )
    fresh = changed_benchmark(None, "fresh", fields, catalog, STAMP, {})
    _, newest = await store.change_bounds()
    await store.insert(Collection.BENCHMARKS, fresh)
    created = await last_change(store, newest)
    assert created.kind is ChangeKind.BENCHMARK_CREATED
    assert created.subjects == {
        "benchmark:fresh",
        "catalog",
        "category:tool-use",
        "family:fresh",
        "listings",
    }

    await store.insert(Collection.API_KEYS, API_KEY)
    key = await last_change(store, created.sequence)
    assert key.kind is ChangeKind.API_KEY_CHANGED
    assert key.subjects == {"keys"}

    [qwen] = await store.models_by_slugs(["qwen-14b"])
    released: ModelDoc = {
        **qwen,
        "released_on": YearMonth("2023-10"),
        "revision": qwen["revision"] + 1,
    }
    assert await store.replace_at_revision(
        Collection.MODELS, "qwen-14b", qwen["revision"], released
    )
    dated = await last_change(store, key.sequence)
    assert dated.kind is ChangeKind.MODEL_UPDATED
    assert dated.subjects == {"model:qwen-14b"}

    named: ModelDoc = {
        **released,
        "keys": [*released["keys"], "qwen 14"],
        "revision": released["revision"] + 1,
    }
    assert await store.replace_at_revision(
        Collection.MODELS, "qwen-14b", released["revision"], named
    )
    renamed = await last_change(store, dated.sequence)
    assert renamed.subjects == {"model:qwen-14b", "models"}
