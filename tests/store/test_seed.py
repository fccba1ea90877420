"""The bundled dataset, the seed, and what the store guarantees on its own."""

import pytest

from editing.importer import seed
from store import Store
from store.mongo import MongoStore
from store.queries import AlreadyExists, Collection
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
    if isinstance(store, MongoStore) and store.db.client.__class__.__name__.startswith(
        "AsyncMongoMock"
    ):
        pytest.skip("mongomock does not enforce unique indexes over arrays; MongoDB does")
    intruder = {**(await store.models_by_slugs(["qwen-14b"]))[0], "slug": "impostor"}
    with pytest.raises(AlreadyExists) as taken:
        await store.insert(Collection.MODELS, intruder)
    assert "keys" in taken.value.key
    assert [m["slug"] for m in await store.models_by_keys(["qwen-14b-chat"])] == ["qwen-14b"]


async def test_slugs_are_unique(store: Store) -> None:
    [held] = await store.benchmarks_by_slugs(["code-interpreter-benchmark-general"])
    with pytest.raises(AlreadyExists):
        await store.insert(Collection.BENCHMARKS, {**held, "name": "Another"})
    [still] = await store.benchmarks_by_slugs(["code-interpreter-benchmark-general"])
    assert still["name"] == held["name"]


async def test_a_page_comes_with_its_neighbourhood_without_histories(store: Store) -> None:
    found = await store.benchmark_with_neighbourhood("code-interpreter-benchmark-math", 20)
    assert found is not None
    doc, neighbourhood = found
    assert doc["name"] == "Code Interpreter Benchmark Math"
    assert len(doc["history"]) == 1
    assert len(neighbourhood.family) == 5
    assert neighbourhood.category_count == 11
    assert neighbourhood.sibling_count == len(neighbourhood.siblings) == 6
    assert "_id" not in doc
    assert all("_id" not in member for member in neighbourhood.siblings)
    assert all("history" not in member for member in neighbourhood.siblings)
    assert await store.benchmark_with_neighbourhood("nope", 20) is None
