"""The bundled dataset, the seed, and what the store guarantees on its own."""

import pytest
from pymongo.errors import DuplicateKeyError

from editing.importer import seed
from store.queries import Store
from store.seed import load_bundled_dataset


async def test_seeding_twice_changes_nothing(store: Store) -> None:
    before = store.version.current
    summary = await seed(store)
    assert summary.count("created") == summary.count("updated") == 0
    assert summary.count("rejected") == 0
    assert summary.count("unchanged") == len(summary.outcomes) == 4 + 1 + 8 + 11 + 2
    assert store.version.current == before


async def test_the_bundled_dataset_is_the_reference_data() -> None:
    dataset = load_bundled_dataset()
    slugs = [b["slug"] for b in dataset["benchmarks"]]
    assert len(slugs) == len(set(slugs)) == 11

    def scores(slug_end: str) -> dict[str, float]:
        found = next(b for b in dataset["benchmarks"] if b["slug"].endswith(slug_end))
        [read] = found["reads"]
        return {e["model_name"]: e["score"] for e in read["entries"]}

    assert scores("-general")["ChatGLM3-6B"] == 62.1
    assert scores("-visualization-easy")["InternLM-20B-Chat"] == 24.1
    assert dataset["site"] == {"launch_posts_read": 522, "labs_read": 52}


async def test_an_alias_belongs_to_one_model(store: Store) -> None:
    # MongoDB refuses a second owner of any key; the embedded store does not enforce unique
    # indexes over arrays, so there only the index's declaration can be checked (the editor
    # checks owners itself: tests/http/test_models_writes.py).
    indexes = await store.db.models.index_information()
    assert indexes["keys_unique"]["unique"] is True
    if not store.embedded:
        intruder = {"slug": "impostor", "name": "Impostor", "keys": ["qwen-14b-chat"]}
        with pytest.raises(DuplicateKeyError):
            await store.db.models.insert_one(intruder)


async def test_slugs_are_unique(store: Store) -> None:
    with pytest.raises(DuplicateKeyError):
        await store.db.benchmarks.insert_one({"slug": "code-interpreter-benchmark-general"})


async def test_neighbourhood_comes_in_one_query_without_histories(store: Store) -> None:
    found = await store.benchmark_with_neighbourhood("code-interpreter-benchmark-math")
    assert found is not None
    doc, neighbourhood = found
    assert doc["name"] == "Code Interpreter Benchmark Math"
    assert len(doc["history"]) == 1
    assert len(neighbourhood.family) == 5
    assert len(neighbourhood.category) == 11
    assert "_id" not in doc
    assert all("_id" not in member for member in neighbourhood.category)
    assert all("history" not in member for member in neighbourhood.category)
    assert await store.benchmark_with_neighbourhood("nope") is None
