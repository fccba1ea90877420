"""The embedded store's connection: one SQLite connection on one thread of its own (so the
event loop never waits on the disk), each write one transaction with its changes logged in it."""

import asyncio
import contextlib
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import orjson

from store.changes import (
    RETENTION,
    Change,
    ChangeReceipt,
    DataVersion,
    LogFollower,
    PruneClock,
    expired_before,
)
from store.documents import BenchmarkDoc
from store.queries import StoreUnavailable, WriteFailed
from store.sqlite.changelog import Drafts, append_changes, bounds_of
from store.sqlite.rows import benchmark_rows
from store.sqlite.tables import SCHEMA, SCHEMA_VERSION, UPGRADES_FROM, add_summaries

T = TypeVar("T")

DATABASE_FILE = "almanac.sqlite3"


class SqliteConnection:
    """The database file of a data directory, opened: what every role of the store runs on."""

    def __init__(self, data_dir: Path, *, retention: timedelta = RETENTION) -> None:
        data_dir.mkdir(parents=True, exist_ok=True)
        self.path = data_dir / DATABASE_FILE
        self.version = DataVersion(known=True)
        self.follower = LogFollower(self.version)
        self.retention = retention
        self.pruning = PruneClock()
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="almanac-sqlite")
        try:
            self._connection = self._thread.submit(self._open).result()
            _, newest = self._thread.submit(bounds_of, self._connection).result()
            self.follower.start(newest)
        except sqlite3.DatabaseError as error:
            self._thread.shutdown()
            raise StoreUnavailable(
                f"{self.path} cannot be read as the almanac's database ({error}): restore it "
                "from a backup, or move it aside to start a new one here."
            ) from None
        except StoreUnavailable:
            self._thread.shutdown()
            raise

    def _open(self) -> sqlite3.Connection:
        connection = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            return self._prepared(connection)
        except BaseException:
            connection.close()
            raise

    def _prepared(self, connection: sqlite3.Connection) -> sqlite3.Connection:
        connection.execute("PRAGMA busy_timeout = 10000")  # wait for another process's write
        # Read before anything is written: a file that is not the almanac's is left as it was.
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
        if tables and "benchmarks" not in tables:
            raise StoreUnavailable(
                f"{self.path} is an SQLite database of something else (no almanac tables): "
                "move it aside, or set ALMANAC_DATA_DIR to the almanac's own data directory."
            )
        if tables and version != SCHEMA_VERSION and version not in UPGRADES_FROM:
            raise StoreUnavailable(
                f"{self.path} was made by another version of the API (schema {version}, this one "
                f"reads {SCHEMA_VERSION}): export it with that version, then import it here."
            )
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA synchronous = NORMAL")  # durable at each checkpoint
        connection.execute("PRAGMA foreign_keys = ON")
        connection.execute("PRAGMA wal_autocheckpoint = 10000")  # 40 MB: fewer fsyncs
        connection.execute("PRAGMA cache_size = -65536")  # 64 MB of pages: the indexes, mostly
        connection.executescript(SCHEMA)
        add_summaries(connection)
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        return connection

    async def _run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(
            self._thread, partial(work, self._connection)
        )

    async def _write(
        self,
        work: Callable[[sqlite3.Connection, Drafts], T],
        receipt: ChangeReceipt | None = None,
    ) -> T:
        """`work` in one transaction (taken at once, so writers queue rather than deadlock),
        with the changes it describes appended to the change log in the same transaction (and
        noted in `receipt`, if given)."""
        logged: list[Change] = []

        def transaction(connection: sqlite3.Connection) -> T:
            drafts: Drafts = []
            connection.execute("BEGIN IMMEDIATE")
            try:
                outcome = work(connection, drafts)
                changes = append_changes(connection, drafts)
                if changes and self.pruning.due():
                    expired = expired_before(self.retention)
                    connection.execute(
                        "DELETE FROM changes WHERE at < ? AND sequence < ?",
                        (expired, changes[0].sequence),
                    )
                connection.execute("COMMIT")
            except BaseException:
                if connection.in_transaction:
                    with contextlib.suppress(sqlite3.Error):  # the disk may refuse this too
                        connection.execute("ROLLBACK")
                raise
            logged[:] = changes
            return outcome

        try:
            outcome = await self._run(transaction)
        except sqlite3.OperationalError as error:
            if error.sqlite_errorcode & 0xFF not in (sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR):
                raise
            raise WriteFailed(f"{self.path}: {error}") from error
        self.follower.local(logged)
        if receipt is not None:
            receipt.note(logged)
        return outcome

    async def watch_statements(self, seen: Callable[[str], None] | None) -> None:
        """Call `seen` with every statement run from now on (None: stop), for checking the
        query plans of real requests."""
        await self._run(lambda connection: connection.set_trace_callback(seen))

    async def query_plan(self, statement: str) -> list[str]:
        """How SQLite runs `statement`: each step of `EXPLAIN QUERY PLAN`."""

        def read(connection: sqlite3.Connection) -> list[str]:
            return [row[3] for row in connection.execute(f"EXPLAIN QUERY PLAN {statement}")]

        return await self._run(read)

    async def backup(self, target: Path) -> None:
        """A consistent copy of the database in `target`, made with SQLite's online backup
        while other processes read and write it; `target` appears only once it is whole."""
        partial_copy = target.with_name(f".{target.name}.partial")

        def copy(connection: sqlite3.Connection) -> None:
            partial_copy.unlink(missing_ok=True)
            with contextlib.closing(sqlite3.connect(partial_copy)) as copied:
                connection.backup(copied)
            partial_copy.replace(target)

        try:
            await self._run(copy)
        finally:
            partial_copy.unlink(missing_ok=True)

    async def close(self) -> None:
        await self._run(lambda connection: connection.close())
        self._thread.shutdown()

    async def _docs(
        self, sql: str, values: list[str] | None, close: str = "", order: str = ""
    ) -> list[Any]:
        def read(connection: sqlite3.Connection) -> list[Any]:
            if values is None:
                rows = connection.execute(f"{sql} {order}").fetchall()
            else:
                marks = ",".join("?" * len(values))
                rows = connection.execute(f"{sql} ({marks}){close} {order}", values).fetchall()
            return [orjson.loads(row[0]) for row in rows]

        return await self._run(read)

    async def _benchmarks(
        self, where: str, values: list[str], *, history: bool = False, close: str = ""
    ) -> list[BenchmarkDoc]:
        def read(connection: sqlite3.Connection) -> list[BenchmarkDoc]:
            return benchmark_rows(connection, where, values, history=history, close=close)

        return await self._run(read)

    async def _site(self, ident: str) -> dict[str, Any] | None:
        def read(connection: sqlite3.Connection) -> dict[str, Any] | None:
            row = connection.execute("SELECT doc FROM site WHERE id = ?", (ident,)).fetchone()
            return None if row is None else orjson.loads(row[0])

        return await self._run(read)
