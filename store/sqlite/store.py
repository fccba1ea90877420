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

from store.sqlite.benchmarks import BenchmarkReads
from store.sqlite.catalog import CatalogReads
from store.sqlite.changes import ChangeLogReads
from store.sqlite.keeping import Keeping
from store.sqlite.keys import KeyRecords
from store.sqlite.webhooks import WebhookRecords


class SqliteStore(
    Keeping, BenchmarkReads, CatalogReads, KeyRecords, ChangeLogReads, WebhookRecords
):
    """The almanac's documents in SQLite, every role of the interface (store.interface) on one
    connection (store.sqlite.connection). Each public coroutine is one transaction."""

    embedded = True
