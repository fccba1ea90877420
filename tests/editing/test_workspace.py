"""Derived data placed anew outside a write: the leaders of benchmarks written before leaders
were stored."""

import sqlite3

from editing import place_missing_leaders
from store import BenchmarkFilter, Store
from store.mongo import MongoStore
from store.sqlite import SqliteStore


async def forget_leaders(store: Store) -> None:
    """Every benchmark as written before leaders were stored with it."""
    if isinstance(store, MongoStore):
        await store.db.benchmarks.update_many({}, {"$unset": {"leaders": ""}})
        return
    assert isinstance(store, SqliteStore)
    with sqlite3.connect(store.path) as connection:  # another connection, as an older process
        connection.execute(
            "UPDATE benchmarks SET doc = json_remove(CAST(doc AS TEXT), '$.leaders'), "
            "summary = json_remove(CAST(summary AS TEXT), '$.leaders')"
        )


async def leaders_by_slug(store: Store) -> dict[str, object]:
    summaries, total = await store.benchmark_page(BenchmarkFilter(), "name", None, 1000)
    assert len(summaries) == total
    return {doc["slug"]: doc.get("leaders") for doc in summaries}


async def test_leaders_missing_from_older_data_are_stored_once(store: Store) -> None:
    written = await leaders_by_slug(store)
    assert all(written.values())  # the seed stored them as it wrote
    await forget_leaders(store)
    assert not any((await leaders_by_slug(store)).values())
    assert len(await store.benchmarks_without_leaders("", 1000)) == len(written)

    assert await place_missing_leaders(store, batch=3) == len(written)
    assert await leaders_by_slug(store) == written
    assert await store.benchmarks_without_leaders("", 1000) == []
    assert await place_missing_leaders(store) == 0  # a second process finds nothing to do
