"""Reads of benchmarks on the embedded store: pages, neighbourhoods, leaderboards."""

import sqlite3
from typing import Any

import orjson

from store.documents import BenchmarkDoc, BenchmarkSummaryDoc
from store.queries import BenchmarkFilter, Collection, Neighbourhood, NeighbourhoodRequest, Order
from store.sqlite.connection import SqliteConnection
from store.sqlite.rows import benchmark_rows, neighbourhood, table_of
from store.sqlite.tables import ORDERS


class BenchmarkReads(SqliteConnection):
    """The `Benchmarks` role (store.interface)."""

    async def documents_by_slugs(self, collection: Collection, slugs: list[str]) -> list[Any]:
        if collection == "benchmarks":
            return await self.benchmarks_by_slugs(slugs)
        return await self._docs(f"SELECT doc FROM {table_of(collection)} WHERE slug IN", slugs)

    async def benchmarks_by_slugs(self, slugs: list[str]) -> list[BenchmarkDoc]:
        return await self._benchmarks("slug IN", slugs, history=True)

    async def benchmark_with_neighbourhood(
        self, slug: str, siblings: int
    ) -> tuple[BenchmarkDoc, Neighbourhood] | None:
        """A benchmark, whole, with its neighbourhood and its first `siblings` siblings."""

        def read(connection: sqlite3.Connection) -> tuple[BenchmarkDoc, Neighbourhood] | None:
            found = benchmark_rows(connection, "slug IN", [slug], history=True)
            if not found:
                return None
            doc = found[0]
            request = NeighbourhoodRequest(
                family=doc["family"],
                category=doc["category"]["slug"],
                siblings_limit=siblings,
            )
            return doc, neighbourhood(connection, request)

        return await self._run(read)

    async def neighbourhoods(self, requests: list[NeighbourhoodRequest]) -> list[Neighbourhood]:
        def read(connection: sqlite3.Connection) -> list[Neighbourhood]:
            return [neighbourhood(connection, request) for request in requests]

        return await self._run(read)

    async def benchmarks_with_model_keys(self, keys: list[str]) -> list[BenchmarkDoc]:
        where = "slug IN (SELECT slug FROM benchmark_models WHERE model_key IN"
        return await self._benchmarks(where, keys, close=")")

    async def benchmarks_without_leaders(self, after: str, limit: int) -> list[BenchmarkDoc]:
        def read(connection: sqlite3.Connection) -> list[BenchmarkDoc]:
            # Past the slug index, each summary's JSON is looked into: a one-off pass.
            rows = connection.execute(
                "SELECT doc FROM benchmarks WHERE slug > ? "
                "AND json_type(CAST(summary AS TEXT), '$.leaders') IS NULL ORDER BY slug LIMIT ?",
                (after, limit),
            ).fetchall()
            return [orjson.loads(blob) for (blob,) in rows]

        return await self._run(read)

    async def leaderboard_size(self, slug: str) -> int | None:
        def read(connection: sqlite3.Connection) -> int | None:
            exists, size = connection.execute(
                "SELECT EXISTS (SELECT 1 FROM benchmarks WHERE slug = ?), "
                "(SELECT count(*) FROM benchmark_models WHERE slug = ?)",
                (slug, slug),
            ).fetchone()
            return int(size) if exists else None

        return await self._run(read)

    async def benchmark_page(
        self, where: BenchmarkFilter, order: Order, after: list[Any] | None, limit: int
    ) -> tuple[list[BenchmarkSummaryDoc], int]:
        """Up to `limit` benchmarks of the catalog in `order`, after the one whose order key is
        `after` (an index seek: keyset paging), as summaries, and how many match in all."""
        conditions, parameters = [], []
        for column, value in (
            ("category", where.category),
            ("status", where.status),
            ("kind", where.kind),
            ("lab", where.lab),
        ):
            if value is not None:
                conditions.append(f"{column} = ?")
                parameters.append(value)
        if where.name_contains:
            conditions.append("instr(name_key, ?) > 0")
            parameters.append(where.name_contains.casefold())
        matching = " WHERE " + " AND ".join(conditions) if conditions else ""

        seek, values = "", []
        if after is not None:
            marks = ", ".join("?" * len(after))
            seek = f"{' AND' if conditions else ' WHERE'} ({ORDERS[order]}) > ({marks})"
            values = after

        def read(connection: sqlite3.Connection) -> tuple[list[BenchmarkSummaryDoc], int]:
            total = connection.execute(
                f"SELECT count(*) FROM benchmarks{matching}", parameters
            ).fetchone()[0]
            rows = connection.execute(
                f"SELECT summary FROM benchmarks{matching}{seek} ORDER BY {ORDERS[order]} LIMIT ?",
                [*parameters, *values, limit],
            ).fetchall()
            return [orjson.loads(blob) for (blob,) in rows], total

        return await self._run(read)

    async def model_results(
        self, model: str, offset: int, limit: int
    ) -> tuple[list[BenchmarkDoc], int]:
        """The benchmarks whose leaderboards list a tracked model, its best places first (then
        by name), a page of them, and how many there are."""

        def read(connection: sqlite3.Connection) -> tuple[list[BenchmarkDoc], int]:
            total = connection.execute(
                "SELECT count(*) FROM model_ranks WHERE model = ?", (model,)
            ).fetchone()[0]
            rows = connection.execute(
                "SELECT b.doc FROM model_ranks AS r JOIN benchmarks AS b ON b.slug = r.slug "
                "WHERE r.model = ? ORDER BY r.rank, b.name_key, b.slug LIMIT ? OFFSET ?",
                (model, limit, offset),
            ).fetchall()
            return [orjson.loads(blob) for (blob,) in rows], total

        return await self._run(read)

    async def benchmark_parents(self) -> dict[str, str | None]:
        """Every benchmark's parent (None for none), by slug."""

        def read(connection: sqlite3.Connection) -> dict[str, str | None]:
            rows = connection.execute("SELECT slug, family FROM benchmarks").fetchall()
            return {slug: None if family == slug else family for slug, family in rows}

        return await self._run(read)

    async def benchmarks(self) -> list[BenchmarkDoc]:
        """Every benchmark, whole (for export), by slug."""

        def read(connection: sqlite3.Connection) -> list[BenchmarkDoc]:
            return benchmark_rows(connection, None, None, history=True, order="ORDER BY slug")

        return await self._run(read)
