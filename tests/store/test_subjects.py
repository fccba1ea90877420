"""What a write touches (store.subjects) and what a read depends on (store.reads)."""

from typing import Any

from store import Store, noting_reads
from store.queries import Collection
from store.reads import READS
from store.subjects import (
    ALL_KEY,
    ANY_KEY,
    MAX_KEYS_BYTES,
    benchmark_written,
    model_written,
    purge_keys,
    surrogate_keys,
    written,
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


def test_a_family_move_touches_the_family_left_and_the_one_joined() -> None:
    moved = doc(family="a")
    assert benchmark_written(doc(), moved, {("m", 1)}) == {
        "benchmark:b",
        "catalog",
        "category:c",
        "family:a",
        "family:b",
    }


def test_a_new_lab_touches_the_catalog_its_filter_reads() -> None:
    made = doc(made_by={"slug": "lab-a", "name": "Lab A"})
    assert "catalog" in benchmark_written(doc(), made, {("m", 1)})
    remade = doc(made_by={"slug": "lab-b", "name": "Lab B"})
    assert "catalog" in benchmark_written(made, remade, {("m", 1)})
    renamed = doc(made_by={"slug": "lab-a", "name": "Lab A, renamed"})
    assert benchmark_written(made, renamed, {("m", 1)}) == {"benchmark:b"}


def test_a_model_newly_listed_or_no_longer_placed_is_named() -> None:
    listing = doc(entries=[{"model_key": "m"}, {"model_key": "n"}])
    assert "listings" in benchmark_written(doc(), listing, {("m", 1)})
    assert "listings" in benchmark_written(listing, doc(), {("m", 1)})
    left = doc(tracked_ranks=[])
    assert benchmark_written(doc(), left, {("m", 1)}) == {"benchmark:b", "ranks:m"}
    joined = doc(tracked_ranks=[{"model": "m", "rank": 1}, {"model": "n", "rank": 2}])
    assert benchmark_written(doc(), joined, {("m", 1)}) == {"benchmark:b", "ranks:n"}


def test_a_model_touches_the_tracked_list_only_when_its_names_change() -> None:
    model = {"slug": "m", "keys": ["m"]}
    assert model_written(None, model) == {"model:m", "models"}
    assert model_written(model, {**model, "released_on": "2026-01"}) == {"model:m"}
    assert model_written(model, {**model, "keys": ["m", "m2"]}) == {"model:m", "models"}
    assert model_written(model, {**model, "keys": ["n"]}) == {"model:m", "models"}  # renamed
    two = {**model, "keys": ["m", "m2"]}
    assert model_written(two, {**model, "keys": ["m2", "m"]}) == {"model:m"}  # aliases reordered


def test_a_collection_without_a_subject_of_its_own_is_everything() -> None:
    """What no subject names (a collection added later) retires every answer, when written
    and when read, rather than none."""
    for collection, subject in [("labs", "labs"), ("api_keys", "keys"), ("site", "site")]:
        assert written(collection, None, {}) == {subject}
    assert written("webhooks", None, {}) == {"*"}
    assert set(READS["documents_by_slugs"](("webhooks", ["w"]), [])) == {"*"}


def test_surrogate_keys_name_what_was_read_and_purge_keys_reach_them() -> None:
    keys = surrogate_keys({"benchmark:b", "*"})
    assert keys == [ALL_KEY, ANY_KEY, "benchmark:b"]
    assert set(purge_keys({"model:m"})) & set(keys) == {ANY_KEY}  # read "anything"
    huge = {f"benchmark:{'x' * 100}{i}" for i in range(MAX_KEYS_BYTES // 100)}
    assert surrogate_keys(huge) == [ALL_KEY, ANY_KEY]


def test_surrogate_keys_fill_the_bytes_allowed_and_no_more() -> None:
    """Each key takes its length and a separator: 128 keys of 63 characters fill 8192 bytes."""
    assert MAX_KEYS_BYTES == 128 * 64
    full = {f"benchmark:{i:03d}{'x' * 50}" for i in range(128)}
    assert surrogate_keys(full) == [ALL_KEY, *sorted(full)]
    over = {*sorted(full)[1:], sorted(full)[0] + "y"}  # one byte more
    assert surrogate_keys(over) == [ALL_KEY, ANY_KEY]


async def test_reads_are_noted_by_what_they_asked_and_found(store: Store) -> None:
    read: set[str] = set()
    noted = noting_reads(store, read)
    await noted.benchmarks_by_slugs([GENERAL, "no-such-benchmark"])
    assert read == {f"benchmark:{GENERAL}", "benchmark:no-such-benchmark"}

    read.clear()
    results, _ = await noted.model_results(slug := "qwen-14b", 0, limit=1)  # a named argument too
    assert read == {f"ranks:{slug}", f"benchmark:{results[0]['slug']}"}  # the one shown

    read.clear()
    found = await noted.benchmark_with_neighbourhood(GENERAL, 2)
    assert found is not None
    shown = [summary["slug"] for summary in (*found[1].family, *found[1].siblings)]
    assert len(shown) == 5 + 2  # its family, itself included, and 2 siblings
    assert GENERAL in shown
    assert read == {
        "family:code-interpreter-benchmark",
        "category:tool-use",
        *(f"benchmark:{slug}" for slug in shown),
        *(f"leaders:{slug}" for slug in shown),
    }
    read.clear()
    assert await noted.benchmark_with_neighbourhood("no-such-benchmark", 2) is None
    assert read == {"benchmark:no-such-benchmark"}  # creating it changes the answer

    for collection, slugs, subjects in [
        (Collection.BENCHMARKS, [GENERAL], {f"benchmark:{GENERAL}"}),
        (Collection.MODELS, ["qwen-14b", "none"], {"model:qwen-14b", "model:none"}),
        (Collection.LABS, ["openai"], {"labs"}),
        (Collection.CATEGORIES, ["tool-use"], {"categories"}),
    ]:
        read.clear()
        await noted.documents_by_slugs(collection, slugs)
        assert read == subjects, collection

    read.clear()
    await noted.dump()  # a read no rule describes: it depends on everything
    assert read == {"*"}
    read.clear()
    await noted.ping()
    assert read == set()
    assert noted.insert == store.insert  # a write passes through, noting nothing
    assert read == set()
