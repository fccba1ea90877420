"""The store's ordered and paged reads, the same on both stores: siblings in page-spec rule 9's
order (in use first, then prominence, name and slug), and the catalog's orders, all total."""

from datetime import UTC, datetime
from typing import Any

import pytest

from editing.changes import Catalog, Stamp, changed_benchmark
from editing.inputs import BenchmarkFields, parse
from store import Store
from store.documents import BenchmarkDoc
from store.queries import BenchmarkFilter, Collection, NeighbourhoodRequest, order_key

STAMP = Stamp(by="test", at=datetime(2026, 11, 30, tzinfo=UTC))


def benchmark(slug: str, parents: dict[str, str | None], **fields: Any) -> BenchmarkDoc:
    inputs = {
        "name": slug.replace("-", " ").title(),
        "metric": {"name": "Accuracy", "unit": "PERCENT"},
        "category": "orders",
        **fields,
    }
    catalog = Catalog(
        labs={}, categories={"orders": {"slug": "orders", "name": "Orders"}}, parents=parents
    )
    doc = changed_benchmark(None, slug, parse(BenchmarkFields, inputs), catalog, STAMP, {})
    assert doc is not None
    parents[slug] = doc["parent"]
    return doc


@pytest.fixture
async def ordered(store: Store) -> Store:
    await store.insert(Collection.CATEGORIES, {"slug": "orders", "name": "Orders"})
    parents: dict[str, str | None] = {}
    docs = [
        benchmark("suite", parents),
        benchmark("suite-math", parents, parent="suite", track_position=1),
        benchmark("old", parents, status="RETIRED", prominence=9),
        benchmark("famous", parents, prominence=5, released_on="2024-01"),
        benchmark("b-bench", parents, name="B bench", released_on="2025-06"),
        benchmark("a-bench", parents, name="a bench", released_on="2025-06"),
        benchmark("same-2", parents, name="Same"),
        benchmark("same-1", parents, name="Same"),
    ]
    await store.insert_many(Collection.BENCHMARKS, docs)
    return store


async def test_siblings_leave_out_the_family_and_come_in_rule_9_order(ordered: Store) -> None:
    [around] = await ordered.neighbourhoods([NeighbourhoodRequest("suite", "orders")])
    expected = ["famous", "a-bench", "b-bench", "same-1", "same-2", "old"]
    assert [doc["slug"] for doc in around.siblings] == expected
    assert around.sibling_count == 6
    assert around.category_count == 8
    assert sorted(doc["slug"] for doc in around.family) == ["suite", "suite-math"]
    assert all("history" not in doc for doc in [*around.family, *around.siblings])
    # A slice further on, and another family: the suite is a sibling of a standalone one.
    [later] = await ordered.neighbourhoods([NeighbourhoodRequest("suite", "orders", 2, 3)])
    assert [doc["slug"] for doc in later.siblings] == expected[2:5]
    [other] = await ordered.neighbourhoods([NeighbourhoodRequest("famous", "orders")])
    assert [doc["slug"] for doc in other.siblings][:3] == ["a-bench", "b-bench", "same-1"]
    assert "suite-math" in [doc["slug"] for doc in other.siblings]


async def test_a_benchmark_comes_whole_with_its_neighbourhood(ordered: Store) -> None:
    found = await ordered.benchmark_with_neighbourhood("suite-math", siblings=2)
    assert found is not None
    doc, around = found
    assert doc["slug"] == "suite-math"
    assert "history" in doc
    assert [sibling["slug"] for sibling in around.siblings] == ["famous", "a-bench"]
    assert around.sibling_count == 6
    assert await ordered.benchmark_with_neighbourhood("nope", siblings=2) is None


@pytest.mark.parametrize(
    ("order", "expected"),
    [
        (
            "prominence",
            ["famous", "a-bench", "b-bench", "same-1", "same-2", "suite", "suite-math", "old"],
        ),
        (
            "name",
            ["a-bench", "b-bench", "famous", "old", "same-1", "same-2", "suite", "suite-math"],
        ),
        (
            "newest_release",
            ["a-bench", "b-bench", "famous", "old", "same-1", "same-2", "suite", "suite-math"],
        ),
    ],
)
async def test_the_catalog_is_ordered_and_paged_in_the_store(
    ordered: Store, order: Any, expected: list[str]
) -> None:
    where = BenchmarkFilter(category="orders")
    page, total = await ordered.benchmark_page(where, order, None, 100)
    assert [doc["slug"] for doc in page] == expected
    assert total == 8
    # After a benchmark: a seek to its place in the order, wherever it is.
    later, _ = await ordered.benchmark_page(where, order, order_key(page[2], order), 2)
    assert [doc["slug"] for doc in later] == expected[3:5]
    last, _ = await ordered.benchmark_page(where, order, order_key(page[-1], order), 2)
    assert last == []
    named, count = await ordered.benchmark_page(
        BenchmarkFilter(name_contains="SAME"), order, None, 9
    )
    assert count == 2
    assert [doc["slug"] for doc in named] == ["same-1", "same-2"]


async def test_every_parent_is_known(ordered: Store) -> None:
    parents = await ordered.benchmark_parents()
    assert parents["suite-math"] == "suite"
    assert parents["suite"] is None
    assert parents["code-interpreter-benchmark-general"] == "code-interpreter-benchmark"
