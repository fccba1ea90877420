"""The bundled dataset, the seed, and what the store guarantees on its own."""

import pytest
from pymongo.errors import DuplicateKeyError

from store.queries import Store
from store.seed import load_bundled_dataset, seed


async def test_seeding_twice_changes_nothing(store: Store) -> None:
    before = store.version.current
    summary = await seed(store, load_bundled_dataset())
    assert (summary.created, summary.updated) == (0, 0)
    assert summary.unchanged == summary.benchmarks + summary.models + 1
    assert store.version.current == before


async def test_the_bundled_dataset_is_the_reference_data() -> None:
    dataset = load_bundled_dataset()
    slugs = [b["slug"] for b in dataset["benchmarks"]]
    assert len(slugs) == len(set(slugs)) == 11
    general = next(b for b in dataset["benchmarks"] if b["slug"].endswith("-general"))
    assert {e["model_name"]: e["score"] for e in general["entries"]}["ChatGLM3-6B"] == 62.1
    easy = next(b for b in dataset["benchmarks"] if b["slug"].endswith("-visualization-easy"))
    assert {e["model_name"]: e["score"] for e in easy["entries"]}["InternLM-20B-Chat"] == 24.1
    assert dataset["site"] == {"launch_posts_read": 522, "labs_read": 52}


async def test_an_alias_belongs_to_one_model(store: Store) -> None:
    # MongoDB refuses a second owner of any key; the embedded store does not enforce unique
    # indexes over arrays, so there only the index's declaration can be checked.
    indexes = await store.db.models.index_information()
    assert indexes["keys_unique"]["unique"] is True
    if not store.embedded:
        intruder = {"slug": "impostor", "name": "Impostor", "keys": ["qwen-14b-chat"]}
        with pytest.raises(DuplicateKeyError):
            await store.db.models.insert_one(intruder)


async def test_slugs_are_unique(store: Store) -> None:
    with pytest.raises(DuplicateKeyError):
        await store.db.benchmarks.insert_one({"slug": "code-interpreter-benchmark-general"})


async def test_neighbourhood_comes_in_one_query(store: Store) -> None:
    found = await store.benchmark_with_neighbourhood("code-interpreter-benchmark-math")
    assert found is not None
    doc, neighbourhood = found
    assert doc["name"] == "Code Interpreter Benchmark Math"
    assert len(neighbourhood.family) == 5
    assert len(neighbourhood.category) == 11
    assert "_id" not in doc
    assert all("_id" not in member for member in neighbourhood.category)
    assert await store.benchmark_with_neighbourhood("nope") is None
