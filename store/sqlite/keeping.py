"""The embedded store as a whole: reachable, seeded (under a lock on the data directory),
dumped."""

import asyncio
import fcntl
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import orjson

from store.queries import SEED_ID, Collection, SeedState
from store.sqlite.documents import DocumentWrites
from store.sqlite.rows import benchmark_rows

SEED_LOCK_FILE = "seed.lock"  # held by the one process seeding the directory


class Keeping(DocumentWrites):
    """The `Keeping` role (store.interface); seeds mark themselves by a write."""

    async def ping(self) -> None:
        await self._run(lambda connection: connection.execute("SELECT 1").fetchone())

    async def is_empty(self) -> bool:
        """Whether nothing was ever stored here (a new data directory)."""

        def read(connection: sqlite3.Connection) -> bool:
            tables = ("benchmarks", "models", "labs", "categories", "site", "api_keys")
            return not any(
                connection.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone() for table in tables
            )

        return await self._run(read)

    async def seed_state(self) -> SeedState:
        """How far the bundled dataset's seed got, by its marker (see editing.importer)."""
        marker = await self._site(SEED_ID)
        if marker is not None:
            return SeedState.FINISHED if marker["finished"] else SeedState.STARTED
        return SeedState.NEW if await self.is_empty() else SeedState.UNMARKED

    async def mark_seed(self, finished: bool) -> None:
        """Say that a seed began (False), or, after its last write, that it finished."""
        await self.replace(Collection.SITE, {"_id": SEED_ID}, {"finished": finished})

    @asynccontextmanager
    async def seed_lock(self) -> AsyncIterator[None]:
        """Held while one process seeds the directory: another opening it meanwhile waits, and
        then finds it seeded. The lock goes with the process, however it ends."""
        with (self.path.parent / SEED_LOCK_FILE).open("a") as lock:
            await asyncio.to_thread(fcntl.flock, lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    async def dump(self) -> dict[str, list[Any]]:
        """Every document of every collection, as stored (for checks that nothing changed)."""

        def read(connection: sqlite3.Connection) -> dict[str, list[Any]]:
            collections: dict[str, list[Any]] = {}
            for table in ("api_keys", "categories", "labs", "models", "site"):
                select = (
                    "SELECT id, doc FROM site" if table == "site" else f"SELECT doc FROM {table}"
                )
                rows = connection.execute(select).fetchall()
                collections[table] = [
                    {"_id": row[0], **orjson.loads(row[1])}
                    if table == "site"
                    else orjson.loads(row[0])
                    for row in rows
                ]
            collections["benchmarks"] = benchmark_rows(connection, None, None, history=True)
            return collections

        return await self._run(read)
