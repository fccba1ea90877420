"""The embedded store (SQLite in a data directory), one module per role of the interface
(store.interface) on one connection: documents' writes, benchmarks' and the catalog's reads,
keys, the change log, webhooks, and keeping the store as a whole; beneath them the tables, the
rows of documents and the change log's table."""

from store.sqlite.connection import DATABASE_FILE
from store.sqlite.store import SqliteStore

__all__ = ["DATABASE_FILE", "SqliteStore"]
