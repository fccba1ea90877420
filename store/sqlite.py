"""The embedded store: the same documents as on MongoDB, kept in SQLite in a data directory.

One JSON document per benchmark (its leaderboard embedded; its history of reads in a column of
its own, read only where it is shown; its summary, what a catalog row shows with its stored
leaders, in another, so that a catalog page decodes no entry), per model, lab, category, API
key and site record. The fields that queries filter or sort on are copied into indexed
columns, and a benchmark's model keys and a model's name and alias keys into side tables, on
every write.

Every call runs on one thread of its own with one connection, so the event loop never waits on
the disk. WAL mode lets other processes (the CLI) read and write the same file while a server
runs: each write is one transaction, and a write conditional on a revision is one UPDATE, so of
two writers that read the same revision exactly one succeeds. `PRAGMA data_version` tells this
process when another one has written.
"""

import asyncio
import contextlib
import fcntl
import logging
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import orjson

from store import subjects
from store.changes import (
    RETENTION,
    Change,
    ChangeDraft,
    ChangeFilter,
    ChangeKind,
    DataVersion,
    LogFollower,
    PruneClock,
    document_change,
    expired_before,
    now_instant,
)
from store.documents import (
    ApiKeyDoc,
    BenchmarkDoc,
    BenchmarkSummaryDoc,
    BudgetDoc,
    CategoryCountDoc,
    CategoryDoc,
    DeliveryDoc,
    LabDoc,
    LeadersDoc,
    ModelDoc,
    SiteFiguresDoc,
    TrackedRankDoc,
    WebhookDoc,
)
from store.queries import (
    EXPORTED,
    ORDER_FIELDS,
    PROVENANCE_ID,
    SEED_ID,
    SITE_FIGURES_ID,
    AlreadyExists,
    BenchmarkFilter,
    Collection,
    ItemCounts,
    Neighbourhood,
    NeighbourhoodRequest,
    Order,
    SeedState,
    StoreUnavailable,
    Write,
    WriteFailed,
    summary_of,
)
from store.subjects import (
    KEYS,
    SITE,
    benchmark_written,
    placements,
    ranks_moved,
    written,
)

log = logging.getLogger("almanac.store")

T = TypeVar("T")

DATABASE_FILE = "almanac.sqlite3"
SEED_LOCK_FILE = "seed.lock"  # held by the one process seeding the directory
Drafts = list[ChangeDraft]

SCHEMA = """
CREATE TABLE IF NOT EXISTS benchmarks (
    slug TEXT PRIMARY KEY,
    revision INTEGER NOT NULL,
    name TEXT NOT NULL,
    category TEXT NOT NULL,
    family TEXT NOT NULL,             -- the parent's slug, or the benchmark's own
    status TEXT NOT NULL,
    -- What the orders sort on, each ascending (resolvers.ordering, kept in each document)
    retired INTEGER NOT NULL,
    demotion INTEGER NOT NULL,
    name_key TEXT NOT NULL,
    release_key TEXT NOT NULL,
    kind TEXT,
    lab TEXT,
    doc BLOB NOT NULL,
    history BLOB NOT NULL,
    summary BLOB NOT NULL             -- store.queries.summary_of, with the stored leaders
);
CREATE INDEX IF NOT EXISTS benchmarks_by_prominence
    ON benchmarks (retired, demotion, name_key, slug);
CREATE INDEX IF NOT EXISTS benchmarks_by_name ON benchmarks (name_key, slug);
CREATE INDEX IF NOT EXISTS benchmarks_by_release ON benchmarks (release_key, name_key, slug);
CREATE INDEX IF NOT EXISTS benchmarks_in_category
    ON benchmarks (category, retired, demotion, name_key, slug);
CREATE INDEX IF NOT EXISTS benchmarks_in_family ON benchmarks (family);
CREATE INDEX IF NOT EXISTS benchmarks_by_lab ON benchmarks (lab);
CREATE TABLE IF NOT EXISTS benchmark_models (
    model_key TEXT NOT NULL,
    slug TEXT NOT NULL REFERENCES benchmarks (slug) ON DELETE CASCADE,
    PRIMARY KEY (model_key, slug)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS benchmark_models_slug ON benchmark_models (slug);
CREATE TABLE IF NOT EXISTS model_ranks (
    model TEXT NOT NULL,              -- a tracked model's slug
    slug TEXT NOT NULL REFERENCES benchmarks (slug) ON DELETE CASCADE,
    rank INTEGER NOT NULL,            -- its place on that benchmark's leaderboard
    PRIMARY KEY (model, slug)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS model_ranks_in_order ON model_ranks (model, rank);
CREATE INDEX IF NOT EXISTS model_ranks_slug ON model_ranks (slug);
CREATE TABLE IF NOT EXISTS models (
    slug TEXT PRIMARY KEY,
    revision INTEGER NOT NULL,
    doc BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS model_keys (
    key TEXT PRIMARY KEY,
    slug TEXT NOT NULL REFERENCES models (slug) ON DELETE CASCADE
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS model_keys_slug ON model_keys (slug);
CREATE TABLE IF NOT EXISTS labs (slug TEXT PRIMARY KEY, doc BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS categories (slug TEXT PRIMARY KEY, doc BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS api_keys (
    key_id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    revoked_at TEXT,
    doc BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS site (id TEXT PRIMARY KEY, doc BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS changes (  -- the change log (store.changes), one row a change
    sequence INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused, even after old rows go
    at TEXT NOT NULL,
    kind TEXT NOT NULL,
    collection TEXT,
    slug TEXT,
    revision INTEGER,
    by TEXT,
    category TEXT,                    -- a benchmark's, after the change
    subjects TEXT NOT NULL            -- a JSON array (store.subjects)
);
CREATE INDEX IF NOT EXISTS changes_by_time ON changes (at);
CREATE INDEX IF NOT EXISTS changes_of_document ON changes (slug, sequence);
CREATE INDEX IF NOT EXISTS changes_in_category ON changes (category, sequence);
CREATE TABLE IF NOT EXISTS webhooks (  -- server.webhooks: the endpoints partners made
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    doc TEXT NOT NULL                 -- JSON, its lease too: taken by one conditional UPDATE
);
CREATE INDEX IF NOT EXISTS webhooks_of_owner ON webhooks (owner);
CREATE TABLE IF NOT EXISTS webhook_deliveries (
    id TEXT PRIMARY KEY,              -- the webhook-id sent
    webhook TEXT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    doc BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS webhook_deliveries_in_order
    ON webhook_deliveries (webhook, created_at);
"""

SCHEMA_VERSION = 5
# Versions whose files this one opens and upgrades (4 added the change log, 5 the summaries).
UPGRADES_FROM = {3, 4}
BENCHMARK_COLUMNS = (
    "slug, revision, name, category, family, status, retired, demotion, name_key, release_key, "
    "kind, lab, doc, history, summary"
)
# The orders of a catalog (store.queries.ORDER_FIELDS), as SQL.
ORDERS = {order: ", ".join(fields) for order, fields in ORDER_FIELDS.items()}
SLUGGED = {"labs", "categories"}


class SqliteStore:
    """The almanac's documents in SQLite. Each public coroutine is one transaction."""

    embedded = True

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
            _, newest = self._thread.submit(_change_bounds, self._connection).result()
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
        _add_summaries(connection)
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        return connection

    async def _run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(
            self._thread, partial(work, self._connection)
        )

    async def _write(self, work: Callable[[sqlite3.Connection, Drafts], T]) -> T:
        """`work` in one transaction (taken at once, so writers queue rather than deadlock),
        with the changes it describes appended to the change log in the same transaction."""
        logged: list[Change] = []

        def transaction(connection: sqlite3.Connection) -> T:
            drafts: Drafts = []
            connection.execute("BEGIN IMMEDIATE")
            try:
                outcome = work(connection, drafts)
                changes = _log(connection, drafts)
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

    # Writes

    async def replace(
        self,
        collection: Collection,
        key: dict[str, Any],
        doc: Any,
        *,
        along: dict[str, dict[str, Any]] | None = None,
    ) -> str:
        """Write a site record in place of the one under `key`: "created", "updated" or
        "unchanged"; with the site records `along` (by id) in the same transaction."""
        assert collection == "site"
        records = {key["_id"]: doc, **(along or {})}

        def write(connection: sqlite3.Connection, drafts: Drafts) -> str:
            results = []
            for ident, record in records.items():
                blob = _dumps({k: v for k, v in record.items() if k != "_id"})
                held = connection.execute("SELECT doc FROM site WHERE id = ?", (ident,)).fetchone()
                if held is not None and held[0] == blob:
                    results.append("unchanged")
                    continue
                connection.execute(
                    "INSERT OR REPLACE INTO site (id, doc) VALUES (?, ?)", (ident, blob)
                )
                drafts.append(document_change("site", held, {"slug": ident}, [SITE]))
                results.append("updated" if held is not None else "created")
            return results[0]

        return await self._write(write)

    async def insert(self, collection: Collection, doc: Any, *, by: str | None = None) -> None:
        """Store a new document; `AlreadyExists` if its slug, key or name is taken."""
        await self.insert_many(collection, [doc], by=by)

    async def insert_many(
        self, collection: Collection, docs: Iterable[Any], *, by: str | None = None
    ) -> None:
        """Store new documents in one transaction: all of them, or none."""
        docs = list(docs)

        def write(connection: sqlite3.Connection, drafts: Drafts) -> None:
            for doc in docs:
                drafts.append(_insert(connection, collection, doc, by))

        await self._write(write)

    async def replace_at_revision(
        self, collection: Collection, slug: str, revision: int, doc: Any
    ) -> bool:
        """Replace the document `slug` if it is still at `revision`; False if it moved on."""

        def write(connection: sqlite3.Connection, drafts: Drafts) -> bool:
            change = _replace(connection, collection, slug, revision, doc)
            if change is not None:
                drafts.append(change)
            return change is not None

        return await self._write(write)

    async def write_batch(self, writes: list[Write]) -> list[bool]:
        """Many writes in one transaction, each whole or not at all (a savepoint each): False
        for one refused, because its key is taken or its document moved on."""

        def write(connection: sqlite3.Connection, drafts: Drafts) -> list[bool]:
            done = []
            for one in writes:
                connection.execute("SAVEPOINT one")
                change: ChangeDraft | None
                try:
                    if one.revision is None:
                        change = _insert(connection, one.collection, one.doc)
                    else:
                        change = _replace(
                            connection, one.collection, one.doc["slug"], one.revision, one.doc
                        )
                except AlreadyExists:
                    change = None
                if change is None:
                    connection.execute("ROLLBACK TO one")
                else:
                    drafts.append(change)
                connection.execute("RELEASE one")
                done.append(change is not None)
            return done

        return await self._write(write)

    async def revoke_api_key(self, name: str, at: str) -> bool:
        """Revoke the key called `name`; False if there is no such key still in force."""
        return await self._change_api_key(name, lambda doc: {**doc, "revoked_at": at})

    async def set_api_key_budget(self, name: str, budget: BudgetDoc | None) -> bool:
        """Give the key called `name` its own budget, or the configured one again (None)."""

        def with_budget(doc: dict[str, Any]) -> dict[str, Any]:
            kept = {key: value for key, value in doc.items() if key != "budget"}
            return kept if budget is None else {**kept, "budget": budget}

        return await self._change_api_key(name, with_budget)

    async def _change_api_key(
        self, name: str, change: Callable[[dict[str, Any]], dict[str, Any]]
    ) -> bool:
        """Rewrite the key called `name` as `change` makes it; False if none is in force."""

        def write(connection: sqlite3.Connection, drafts: Drafts) -> bool:
            row = connection.execute(
                "SELECT doc FROM api_keys WHERE name = ? AND revoked_at IS NULL", (name,)
            ).fetchone()
            if row is None:
                return False
            doc = change(orjson.loads(row[0]))
            connection.execute(
                "UPDATE api_keys SET revoked_at = ?, doc = ? WHERE name = ?",
                (doc["revoked_at"], _dumps(doc), name),
            )
            drafts.append(document_change("api_keys", row, {}, [KEYS]))
            return True

        return await self._write(write)

    # Reads

    async def ping(self) -> None:
        await self._run(lambda connection: connection.execute("SELECT 1").fetchone())

    async def documents_by_slugs(self, collection: Collection, slugs: list[str]) -> list[Any]:
        if collection == "benchmarks":
            return await self.benchmarks_by_slugs(slugs)
        return await self._docs(f"SELECT doc FROM {_table(collection)} WHERE slug IN", slugs)

    async def benchmarks_by_slugs(self, slugs: list[str]) -> list[BenchmarkDoc]:
        return await self._benchmarks("slug IN", slugs, history=True)

    async def benchmark_with_neighbourhood(
        self, slug: str, siblings: int
    ) -> tuple[BenchmarkDoc, Neighbourhood] | None:
        """A benchmark, whole, with its neighbourhood and its first `siblings` siblings."""

        def read(connection: sqlite3.Connection) -> tuple[BenchmarkDoc, Neighbourhood] | None:
            found = _benchmark_rows(connection, "slug IN", [slug], history=True)
            if not found:
                return None
            doc = found[0]
            request = NeighbourhoodRequest(
                family=doc["family"],
                category=doc["category"]["slug"],
                siblings_limit=siblings,
            )
            return doc, _neighbourhood(connection, request)

        return await self._run(read)

    async def neighbourhoods(self, requests: list[NeighbourhoodRequest]) -> list[Neighbourhood]:
        def read(connection: sqlite3.Connection) -> list[Neighbourhood]:
            return [_neighbourhood(connection, request) for request in requests]

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

    async def set_tracked_ranks(
        self,
        ranks: dict[str, tuple[int, list[TrackedRankDoc]]],
        leaders: dict[str, LeadersDoc] | None = None,
    ) -> list[str]:
        """Place tracked models anew on these benchmarks' leaderboards (derived data only), and
        with `leaders` (by slug) their summaries' leaders, each if it is still at the revision
        its placements were made from: the slugs that moved on (left as their writer placed
        them)."""

        def write(connection: sqlite3.Connection, drafts: Drafts) -> list[str]:
            moved, touched = [], set()
            for slug, (revision, placed) in ranks.items():
                held = connection.execute(
                    "SELECT doc, summary FROM benchmarks WHERE slug = ? AND revision = ?",
                    (slug, revision),
                ).fetchone()
                if held is None:
                    moved.append(slug)
                    continue
                before = _placements(connection, slug)
                connection.execute("DELETE FROM model_ranks WHERE slug = ?", (slug,))
                _insert_ranks(connection, slug, placed)
                touched |= ranks_moved(before, placements({"tracked_ranks": placed}))
                if leaders is not None and slug in leaders:
                    # In the document too, as on MongoDB: a write comparing it finds it current.
                    doc, summary = orjson.loads(held[0]), orjson.loads(held[1])
                    if summary.get("leaders") != leaders[slug]:
                        doc["leaders"] = summary["leaders"] = leaders[slug]
                        connection.execute(
                            "UPDATE benchmarks SET doc = ?, summary = ? WHERE slug = ?",
                            (_dumps(doc), _dumps(summary), slug),
                        )
                        touched.add(subjects.leaders(slug))
            if touched:
                drafts.append(ChangeDraft(ChangeKind.PLACEMENTS_UPDATED, frozenset(touched)))
            return moved

        return await self._write(write)

    async def benchmark_parents(self) -> dict[str, str | None]:
        """Every benchmark's parent (None for none), by slug."""

        def read(connection: sqlite3.Connection) -> dict[str, str | None]:
            rows = connection.execute("SELECT slug, family FROM benchmarks").fetchall()
            return {slug: None if family == slug else family for slug, family in rows}

        return await self._run(read)

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

    async def benchmarks(self) -> list[BenchmarkDoc]:
        """Every benchmark, whole (for export), by slug."""

        def read(connection: sqlite3.Connection) -> list[BenchmarkDoc]:
            return _benchmark_rows(connection, None, None, history=True, order="ORDER BY slug")

        return await self._run(read)

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

    async def api_key(self, key_id: str) -> ApiKeyDoc | None:
        found: list[ApiKeyDoc] = await self._docs(
            "SELECT doc FROM api_keys WHERE key_id IN", [key_id]
        )
        return found[0] if found else None

    async def api_keys(self) -> list[ApiKeyDoc]:
        return await self._docs("SELECT doc FROM api_keys", None, order="ORDER BY created_at")

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
            collections["benchmarks"] = _benchmark_rows(connection, None, None, history=True)
            return collections

        return await self._run(read)

    async def follow_changes(self) -> None:
        """Apply the changes other processes log, as they log them, until cancelled."""
        await self.follower.follow(self.changes_after, self.change_bounds)

    async def changes_after(
        self,
        sequence: int,
        limit: int,
        where: ChangeFilter | None = None,
        *,
        newest_first: bool = False,
    ) -> list[Change]:
        """Up to `limit` changes of the log after `sequence` (those `where` matches), oldest
        first: the first `limit` of them, or the last (`newest_first`), newest first."""
        conditions, values = ["sequence > ?"], list[object]([sequence])
        if where is not None:
            if where.kinds is not None:
                conditions.append(f"kind IN ({','.join('?' * len(where.kinds))})")
                values += sorted(map(str, where.kinds))
            if documents := where.documents():
                either = []
                for collection, slugs in documents.items():
                    either.append(f"(collection = ? AND slug IN ({','.join('?' * len(slugs))}))")
                    values += [collection, *sorted(slugs)]
                conditions.append(f"({' OR '.join(either)})")
            if where.category is not None:
                conditions.append("category = ?")
                values.append(where.category)

        def read(connection: sqlite3.Connection) -> list[Change]:
            rows = connection.execute(
                f"SELECT {CHANGE_COLUMNS} FROM changes WHERE {' AND '.join(conditions)} "
                f"ORDER BY sequence {'DESC' if newest_first else ''} LIMIT ?",
                [*values, limit],
            ).fetchall()
            return [_change(row) for row in rows]

        return await self._run(read)

    async def change_bounds(self) -> tuple[int, int]:
        """The sequence numbers of the log's oldest change kept (the next one while none is)
        and of its newest ever (0 before the first)."""

        def read(connection: sqlite3.Connection) -> tuple[int, int]:
            return _change_bounds(connection)

        return await self._run(read)

    # Webhooks: written in transactions of their own, logging no change.

    async def insert_webhook(self, doc: WebhookDoc, most: int) -> bool:
        def write(connection: sqlite3.Connection, _: Drafts) -> bool:
            cursor = connection.execute(  # one statement: the count and the insert together
                "INSERT INTO webhooks (id, owner, doc) SELECT ?, ?, ? "
                "WHERE (SELECT count(*) FROM webhooks WHERE owner = ?) < ?",
                (doc["id"], doc["owner"], _dumps(doc).decode(), doc["owner"], most),
            )
            return cursor.rowcount > 0

        return await self._write(write)

    async def webhook(self, webhook_id: str) -> WebhookDoc | None:
        found = await self._docs("SELECT doc FROM webhooks WHERE id IN", [webhook_id])
        return found[0] if found else None

    async def webhooks(self, owner: str | None = None) -> list[WebhookDoc]:
        if owner is None:
            return await self._docs("SELECT doc FROM webhooks", None, order="ORDER BY rowid")
        return await self._docs(
            "SELECT doc FROM webhooks WHERE owner IN", [owner], order="ORDER BY rowid"
        )

    async def update_webhook(
        self, webhook_id: str, fields: dict[str, Any], holder: str | None = None
    ) -> bool:
        def write(connection: sqlite3.Connection, _: Drafts) -> bool:
            row = connection.execute(
                "SELECT doc FROM webhooks WHERE id = ?", (webhook_id,)
            ).fetchone()
            if row is None:
                return False
            doc = orjson.loads(row[0])
            if holder is not None and doc["lease_holder"] != holder:
                return False
            connection.execute(
                "UPDATE webhooks SET doc = ? WHERE id = ?",
                (_dumps({**doc, **fields}).decode(), webhook_id),
            )
            return True

        return await self._write(write)

    async def delete_webhook(self, webhook_id: str) -> bool:
        def write(connection: sqlite3.Connection, _: Drafts) -> bool:
            cursor = connection.execute("DELETE FROM webhooks WHERE id = ?", (webhook_id,))
            return cursor.rowcount > 0

        return await self._write(write)

    async def take_webhook_lease(
        self, webhook_id: str, holder: str, now: float, until: float
    ) -> bool:
        def write(connection: sqlite3.Connection, _: Drafts) -> bool:
            cursor = connection.execute(
                "UPDATE webhooks SET doc = json_set(doc, '$.lease_holder', ?, "
                "'$.lease_until', ?) WHERE id = ? AND json_extract(doc, '$.enabled') "
                "AND (json_extract(doc, '$.lease_holder') IS ? "
                "OR json_extract(doc, '$.lease_until') < ?)",
                (holder, until, webhook_id, holder, now),
            )
            return cursor.rowcount > 0

        return await self._write(write)

    async def save_delivery(self, doc: DeliveryDoc) -> None:
        def write(connection: sqlite3.Connection, _: Drafts) -> None:
            connection.execute(
                "INSERT OR REPLACE INTO webhook_deliveries (id, webhook, status, created_at, doc) "
                "VALUES (?, ?, ?, ?, ?)",
                (doc["id"], doc["webhook"], doc["status"], doc["created_at"], _dumps(doc)),
            )

        await self._write(write)

    async def delivery(self, delivery_id: str) -> DeliveryDoc | None:
        found = await self._docs("SELECT doc FROM webhook_deliveries WHERE id IN", [delivery_id])
        return found[0] if found else None

    async def deliveries(
        self, webhook_id: str, limit: int, status: str | None = None
    ) -> list[DeliveryDoc]:
        wanted = "" if status is None else " AND status = ?"

        def read(connection: sqlite3.Connection) -> list[DeliveryDoc]:
            rows = connection.execute(
                f"SELECT doc FROM webhook_deliveries WHERE webhook = ?{wanted} "
                "ORDER BY created_at DESC, rowid DESC LIMIT ?",
                [webhook_id, *([] if status is None else [status]), limit],
            ).fetchall()
            return [orjson.loads(blob) for (blob,) in rows]

        return await self._run(read)

    async def prune_deliveries(self, before: str) -> int:
        def write(connection: sqlite3.Connection, _: Drafts) -> int:
            cursor = connection.execute(
                "DELETE FROM webhook_deliveries WHERE status IN ('delivered', 'failed') "
                "AND created_at < ?",
                (before,),
            )
            return cursor.rowcount

        return await self._write(write)

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
            return _benchmark_rows(connection, where, values, history=history, close=close)

        return await self._run(read)

    async def _site(self, ident: str) -> dict[str, Any] | None:
        def read(connection: sqlite3.Connection) -> dict[str, Any] | None:
            row = connection.execute("SELECT doc FROM site WHERE id = ?", (ident,)).fetchone()
            return None if row is None else orjson.loads(row[0])

        return await self._run(read)


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


def _change_bounds(connection: sqlite3.Connection) -> tuple[int, int]:
    (newest,) = connection.execute(
        "SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'changes'"
    ).fetchone()
    (oldest,) = connection.execute("SELECT min(sequence) FROM changes").fetchone()
    return (newest + 1 if oldest is None else oldest, newest)


def _log(connection: sqlite3.Connection, drafts: Drafts) -> list[Change]:
    """Append these changes to the log (in the writer's transaction): as numbered."""
    at, logged = now_instant(), []
    for draft in drafts:
        cursor = connection.execute(
            "INSERT INTO changes (at, kind, collection, slug, revision, by, category, subjects) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                at,
                draft.kind.value,
                draft.collection,
                draft.slug,
                draft.revision,
                draft.by,
                draft.category,
                _dumps(sorted(draft.subjects)).decode(),
            ),
        )
        assert cursor.lastrowid is not None
        logged.append(Change(**vars(draft), sequence=cursor.lastrowid, at=at))
    return logged


CHANGE_COLUMNS = "sequence, at, kind, collection, slug, revision, by, category, subjects"


def _change(row: tuple[Any, ...]) -> Change:
    sequence, at, kind, collection, slug, revision, by, category, subjects = row
    return Change(
        kind=ChangeKind(kind),
        subjects=frozenset(orjson.loads(subjects)),
        collection=collection,
        slug=slug,
        revision=revision,
        by=by,
        category=category,
        sequence=sequence,
        at=at,
    )


def _placements(connection: sqlite3.Connection, slug: str) -> set[tuple[str, int]]:
    rows = connection.execute("SELECT model, rank FROM model_ranks WHERE slug = ?", (slug,))
    return {(model, rank) for model, rank in rows}


def _benchmark_rows(
    connection: sqlite3.Connection,
    where: str | None,
    values: list[str] | None,
    *,
    history: bool = False,
    close: str = "",
    order: str = "",
) -> list[BenchmarkDoc]:
    """Benchmarks matching `where` (`column IN` the values), with their history if asked."""
    columns = "doc, history" if history else "doc"
    sql = f"SELECT {columns} FROM benchmarks"
    parameters: list[str] = []
    if where is not None and values is not None:
        if not values:
            return []
        sql += f" WHERE {where} ({','.join('?' * len(values))}){close}"
        parameters = values
    docs = []
    for row in connection.execute(f"{sql} {order}", parameters).fetchall():
        doc = orjson.loads(row[0])
        if history:
            doc["history"] = orjson.loads(row[1])
        docs.append(doc)
    return docs


def _neighbourhood(connection: sqlite3.Connection, request: NeighbourhoodRequest) -> Neighbourhood:
    """Four indexed queries: the family, the category's size, a slice of siblings, their count;
    the benchmarks as their summaries."""
    family = connection.execute(
        "SELECT summary FROM benchmarks WHERE family = ?", (request.family,)
    ).fetchall()
    category_count = connection.execute(
        "SELECT count(*) FROM benchmarks WHERE category = ?", (request.category,)
    ).fetchone()[0]
    others = "FROM benchmarks WHERE category = ? AND family != ?"
    sibling_count = connection.execute(
        f"SELECT count(*) {others}", (request.category, request.family)
    ).fetchone()[0]
    rows = connection.execute(
        f"SELECT summary {others} ORDER BY {ORDERS['prominence']} LIMIT ? OFFSET ?",
        (request.category, request.family, request.siblings_limit, request.siblings_offset),
    ).fetchall()
    return Neighbourhood(
        request=request,
        family=[orjson.loads(blob) for (blob,) in family],
        category_count=category_count,
        siblings=[orjson.loads(blob) for (blob,) in rows],
        sibling_count=sibling_count,
    )


def _replace(
    connection: sqlite3.Connection, collection: Collection, slug: str, revision: int, doc: Any
) -> ChangeDraft | None:
    """Put `doc` in place of the document `slug` if it is still at `revision`: the change it
    made (None: it moved on)."""
    table = _table(collection)
    row = connection.execute(
        f"SELECT doc FROM {table} WHERE slug = ? AND revision = ?", (slug, revision)
    ).fetchone()
    if row is None:
        return None
    before = orjson.loads(row[0])
    if collection == "benchmarks":
        subjects = benchmark_written(before, doc, _placements(connection, slug))
    else:
        subjects = written(collection, before, doc)
    connection.execute(f"DELETE FROM {table} WHERE slug = ?", (slug,))
    _insert(connection, collection, doc)
    return document_change(collection, before, doc, subjects)


def _insert(
    connection: sqlite3.Connection, collection: Collection, doc: Any, by: str | None = None
) -> ChangeDraft:
    """Insert one document with its indexed columns and side-table keys: the change it made
    (`by` its writer, where the document does not say)."""
    try:
        if collection == "benchmarks":
            _insert_benchmark(connection, doc)
        elif collection == "models":
            _insert_model(connection, doc)
        elif collection == "api_keys":
            connection.execute(
                "INSERT INTO api_keys (key_id, name, created_at, revoked_at, doc) "
                "VALUES (?, ?, ?, ?, ?)",
                (doc["key_id"], doc["name"], doc["created_at"], doc["revoked_at"], _dumps(doc)),
            )
            return document_change(collection, None, {}, [KEYS], by)
        elif collection in SLUGGED:
            connection.execute(
                f"INSERT INTO {collection} (slug, doc) VALUES (?, ?)", (doc["slug"], _dumps(doc))
            )
        else:
            raise ValueError(f"no collection named {str(collection)!r}")
    except sqlite3.IntegrityError as error:
        raise AlreadyExists(_taken(collection, doc, str(error))) from error
    subjects = (
        benchmark_written(None, doc, set())
        if collection == "benchmarks"
        else written(collection, None, doc)
    )
    return document_change(collection, None, doc, subjects, by)


def _insert_benchmark(connection: sqlite3.Connection, doc: BenchmarkDoc) -> None:
    stored = {k: v for k, v in doc.items() if k != "history"}
    made_by = doc["made_by"]
    connection.execute(
        f"INSERT INTO benchmarks ({BENCHMARK_COLUMNS}) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            doc["slug"],
            doc["revision"],
            doc["name"],
            doc["category"]["slug"],
            doc["family"],
            doc["status"],
            doc["retired"],
            doc["demotion"],
            doc["name_key"],
            doc["release_key"],
            doc["kind"],
            None if made_by is None else made_by["slug"],
            _dumps(stored),
            _dumps(doc.get("history", [])),
            _dumps(summary_of(doc)),
        ),
    )
    keys = {entry["model_key"] for entry in doc["entries"] if "model_key" in entry}
    connection.executemany(
        "INSERT INTO benchmark_models (model_key, slug) VALUES (?, ?)",
        [(key, doc["slug"]) for key in keys],
    )
    _insert_ranks(connection, doc["slug"], doc.get("tracked_ranks", []))


def _add_summaries(connection: sqlite3.Connection) -> None:
    """Give a file made before summaries (schema 4 and older) its summary column, each
    benchmark's summary made from its document. Their leaders are not stored yet (the store
    knows no leaderboard rule): a catalog reads those from the leaderboard until the next
    write of each (schema.benchmark)."""
    if _has_summaries(connection):
        return
    connection.execute("BEGIN IMMEDIATE")
    try:
        if _has_summaries(connection):  # another process upgraded it meanwhile
            connection.execute("COMMIT")
            return
        connection.execute("ALTER TABLE benchmarks ADD COLUMN summary BLOB")
        rows = connection.execute("SELECT slug, doc FROM benchmarks").fetchall()
        connection.executemany(
            "UPDATE benchmarks SET summary = ? WHERE slug = ?",
            [(_dumps(summary_of(orjson.loads(doc))), slug) for slug, doc in rows],
        )
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise


def _has_summaries(connection: sqlite3.Connection) -> bool:
    return any(row[1] == "summary" for row in connection.execute("PRAGMA table_info(benchmarks)"))


def _insert_ranks(connection: sqlite3.Connection, slug: str, ranks: list[TrackedRankDoc]) -> None:
    connection.executemany(
        "INSERT INTO model_ranks (model, slug, rank) VALUES (?, ?, ?)",
        [(rank["model"], slug, rank["rank"]) for rank in ranks],
    )


def _insert_model(connection: sqlite3.Connection, doc: ModelDoc) -> None:
    connection.execute(
        "INSERT INTO models (slug, revision, doc) VALUES (?, ?, ?)",
        (doc["slug"], doc["revision"], _dumps(doc)),
    )
    connection.executemany(
        "INSERT INTO model_keys (key, slug) VALUES (?, ?)",
        [(key, doc["slug"]) for key in doc.get("keys", [])],
    )


def _taken(collection: Collection, doc: Any, message: str) -> dict[str, Any]:
    """Which unique value was taken, as MongoDB names it: `{"slug": ...}`, `{"keys": ...}`."""
    if "model_keys.key" in message:
        return {"keys": doc.get("keys")}
    if "api_keys.name" in message:
        return {"name": doc["name"]}
    if "api_keys.key_id" in message:
        return {"key_id": doc["key_id"]}
    return {"slug": doc.get("slug")}


def _table(collection: Collection) -> str:
    if collection not in ("benchmarks", "models", "labs", "categories", "api_keys"):
        raise ValueError(f"no collection named {str(collection)!r}")
    return collection


def _dumps(doc: Any) -> bytes:
    return orjson.dumps(doc)
