"""The store's writes, as the reads see them: a benchmark's maker kept in the column the lab
filter reads, tracked models placed only on benchmarks still at the revision their places were
worked out from, and a refused insert naming the unique value it collided with. Found by
mutation testing of `store/sqlite.py`'s write paths (docs/testing.md)."""

from pathlib import Path

import pytest

from editing.importer import seed
from store.documents import TrackedRankDoc
from store.queries import AlreadyExists, BenchmarkFilter, Collection, Store
from store.seed import load_bundled_dataset
from store.sqlite import SqliteStore

GENERAL = "code-interpreter-benchmark-general"
HARD = "code-interpreter-benchmark-visualization-hard"


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
