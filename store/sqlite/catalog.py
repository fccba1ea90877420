"""Reads of models, labs, categories and site records on the embedded store, and the
cursors an export reads through."""

import sqlite3
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path
from typing import Any

import orjson

from store.documents import CategoryCountDoc, CategoryDoc, LabDoc, ModelDoc, SiteFiguresDoc
from store.queries import EXPORTED, PROVENANCE_ID, SITE_FIGURES_ID, Collection, ItemCounts
from store.sqlite.connection import SqliteConnection


class CatalogReads(SqliteConnection):
    """The `Catalog` role (store.interface)."""

    async def categories(self) -> list[CategoryCountDoc]:
        def read(connection: sqlite3.Connection) -> list[CategoryCountDoc]:
            rows = connection.execute(
                "SELECT category, count(*), min(doc) FROM benchmarks GROUP BY category "
                "ORDER BY category"
            ).fetchall()
            return [
                {
                    "slug": slug,
                    "name": orjson.loads(doc)["category"]["name"],
                    "benchmark_count": count,
                }
                for slug, count, doc in rows
            ]

        return await self._run(read)

    async def models_by_keys(self, keys: list[str]) -> list[ModelDoc]:
        sql = "SELECT doc FROM models WHERE slug IN (SELECT slug FROM model_keys WHERE key IN"
        return await self._docs(sql, keys, close=")")

    async def models_by_slugs(self, slugs: list[str]) -> list[ModelDoc]:
        return await self._docs("SELECT doc FROM models WHERE slug IN", slugs)

    async def models(self) -> list[ModelDoc]:
        """The whole curated list."""
        return await self._docs("SELECT doc FROM models", None)

    async def item_counts(self) -> ItemCounts:
        """What an export holds, counted in one statement (no document is read)."""

        def read(connection: sqlite3.Connection) -> ItemCounts:
            counts = ", ".join(f"(SELECT count(*) FROM {table})" for table in EXPORTED)
            labs, categories, models, benchmarks = connection.execute(f"SELECT {counts}").fetchone()
            return ItemCounts(labs, categories, models, benchmarks)

        return await self._run(read)

    async def documents_in_batches(
        self, collection: Collection, size: int
    ) -> AsyncIterator[list[Any]]:
        """One cursor per statement, on a connection of its own (so that the store's writes
        never meet a statement still reading), each batch fetched on the store's thread. A
        statement reads one snapshot of its table from its first row to its last."""
        if collection not in EXPORTED:
            raise ValueError(f"{collection!r} is not exported")
        statements = (
            [
                "SELECT doc, history FROM benchmarks WHERE family = slug ORDER BY slug",
                "SELECT doc, history FROM benchmarks WHERE family != slug ORDER BY slug",
            ]
            if collection == "benchmarks"
            else [f"SELECT doc, NULL FROM {collection} ORDER BY slug"]
        )
        reader = await self._run(partial(_reader, self.path))
        try:
            for statement in statements:
                cursor = await self._run(partial(_cursor, reader, statement))
                while batch := await self._run(partial(_decoded, cursor, size)):
                    yield batch
        finally:
            # Queued behind any fetch still running, and not awaited: this also runs when the
            # reading task is being cancelled (a client gone mid-download).
            self._thread.submit(reader.close)

    async def site_figures(self) -> SiteFiguresDoc:
        doc = await self._site(SITE_FIGURES_ID)
        return doc or {"launch_posts_read": 0, "labs_read": 0}  # type: ignore[return-value]

    async def provenance(self) -> list[str]:
        """Where the stored data comes from, one line per source."""
        doc = await self._site(PROVENANCE_ID)
        return list(doc["lines"]) if doc else []

    async def labs(self) -> list[LabDoc]:
        return await self._docs("SELECT doc FROM labs", None, order="ORDER BY slug")

    async def known_categories(self) -> list[CategoryDoc]:
        """The categories a benchmark may be filed under, with or without benchmarks yet."""
        return await self._docs("SELECT doc FROM categories", None, order="ORDER BY slug")


def _reader(path: Path, _: sqlite3.Connection) -> sqlite3.Connection:
    """A connection that reads a table through once: a small page cache does (one each of
    the exports streaming at once)."""
    reader = sqlite3.connect(path, check_same_thread=False)
    reader.execute("PRAGMA cache_size = -256")
    return reader


def _cursor(reader: sqlite3.Connection, statement: str, _: sqlite3.Connection) -> sqlite3.Cursor:
    return reader.execute(statement)


def _decoded(cursor: sqlite3.Cursor, size: int, _: sqlite3.Connection) -> list[Any]:
    """The next `size` rows of a `doc, history` cursor, as documents."""
    docs = []
    for doc_blob, history in cursor.fetchmany(size):
        doc = orjson.loads(doc_blob)
        if history is not None:
            doc["history"] = orjson.loads(history)
        docs.append(doc)
    return docs
