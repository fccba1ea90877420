"""What a write touches (store.subjects) and what a read depends on (store.reads)."""

from typing import Any

from store.queries import Store
from store.reads import noting_reads
from store.subjects import (
    ALL_KEY,
    ANY_KEY,
    MAX_KEYS_BYTES,
    benchmark_written,
    model_written,
    purge_keys,
    surrogate_keys,
)

GENERAL = "code-interpreter-benchmark-general"


def doc(**fields: Any) -> dict[str, Any]:
    base = {
        "slug": "b",
        "category": {"slug": "c", "name": "C"},
        "made_by": None,
        "family": "b",
        "status": "IN_USE",
        "kind": None,
        "retired": 0,
        "demotion": 0,
        "name_key": "b",
        "release_key": "9",
        "entries": [{"model_key": "m"}],
        "tracked_ranks": [{"model": "m", "rank": 1}],
    }
    return {**base, **fields}


def test_a_new_benchmark_touches_its_catalog_category_family_listings_and_ranks() -> None:
    assert benchmark_written(None, doc(), set()) == {
        "benchmark:b",
        "catalog",
        "category:c",
        "family:b",
        "listings",
        "ranks:m",
    }


def test_a_change_of_content_touches_only_the_benchmark() -> None:
    before = doc()
    after = doc(note="new", entries=[{"model_key": "m", "score": 2}])
    assert benchmark_written(before, after, {("m", 1)}) == {"benchmark:b"}


def test_a_move_touches_both_categories_and_a_new_place_the_ranks() -> None:
    moved = doc(category={"slug": "d", "name": "D"})
    assert benchmark_written(doc(), moved, {("m", 1)}) == {
        "benchmark:b",
        "catalog",
        "category:c",
        "category:d",
        "family:b",
    }
    for field, value in [("demotion", 1), ("name_key", "a"), ("status", "RETIRED")]:
        assert "catalog" in benchmark_written(doc(), doc(**{field: value}), {("m", 1)})
    placed = doc(tracked_ranks=[{"model": "m", "rank": 2}])
    assert benchmark_written(doc(), placed, {("m", 1)}) == {"benchmark:b", "ranks:m"}
    relisted = doc(entries=[{"model_key": "n"}])
    assert "listings" in benchmark_written(doc(), relisted, {("m", 1)})


def test_a_model_touches_the_tracked_list_only_when_its_names_change() -> None:
    model = {"slug": "m", "keys": ["m"]}
    assert model_written(None, model) == {"model:m", "models"}
    assert model_written(model, {**model, "released_on": "2026-01"}) == {"model:m"}
    assert model_written(model, {**model, "keys": ["m", "m2"]}) == {"model:m", "models"}


def test_surrogate_keys_name_what_was_read_and_purge_keys_reach_them() -> None:
    keys = surrogate_keys({"benchmark:b", "*"})
    assert keys == [ALL_KEY, ANY_KEY, "benchmark:b"]
    assert set(purge_keys({"model:m"})) & set(keys) == {ANY_KEY}  # read "anything"
    huge = {f"benchmark:{'x' * 100}{i}" for i in range(MAX_KEYS_BYTES // 100)}
    assert surrogate_keys(huge) == [ALL_KEY, ANY_KEY]


async def test_reads_are_noted_by_what_they_asked_and_found(store: Store) -> None:
    read: set[str] = set()
    noted = noting_reads(store, read)
    await noted.benchmarks_by_slugs([GENERAL, "no-such-benchmark"])
    assert read == {f"benchmark:{GENERAL}", "benchmark:no-such-benchmark"}

    read.clear()
    await noted.model_results(slug := "qwen-14b", 0, limit=1)  # a named argument too
    assert f"ranks:{slug}" in read
    assert len(read) == 2  # and the one benchmark shown

    read.clear()
    await noted.dump()  # a read no rule describes: it depends on everything
    assert read == {"*"}
    read.clear()
    await noted.ping()
    assert read == set()
