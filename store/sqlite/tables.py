"""The embedded store's tables: its SQL schema, the versions of it this store opens (and
upgrades), and how a document is stored (JSON, by orjson)."""

import sqlite3
from typing import Any

import orjson

from store.queries import ORDER_FIELDS, summary_of

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


def add_summaries(connection: sqlite3.Connection) -> None:
    """Give a file made before summaries (schema 4 and older) its summary column, each
    benchmark's summary made from its document. Their leaders are not stored yet (the store
    knows no leaderboard rule): a catalog reads those from the leaderboard until the next
    write of each (schema.benchmark)."""
    if has_summaries(connection):
        return
    connection.execute("BEGIN IMMEDIATE")
    try:
        if has_summaries(connection):  # another process upgraded it meanwhile
            connection.execute("COMMIT")
            return
        connection.execute("ALTER TABLE benchmarks ADD COLUMN summary BLOB")
        rows = connection.execute("SELECT slug, doc FROM benchmarks").fetchall()
        connection.executemany(
            "UPDATE benchmarks SET summary = ? WHERE slug = ?",
            [(dumps(summary_of(orjson.loads(doc))), slug) for slug, doc in rows],
        )
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise


def has_summaries(connection: sqlite3.Connection) -> bool:
    return any(row[1] == "summary" for row in connection.execute("PRAGMA table_info(benchmarks)"))


def dumps(doc: Any) -> bytes:
    return orjson.dumps(doc)
