"""The store on MongoDB (through motor): every read and write, one method per round trip."""

from store.mongo.benchmarks import BenchmarkReads
from store.mongo.catalog import CatalogReads
from store.mongo.changes import ChangeLogReads
from store.mongo.keeping import Keeping
from store.mongo.keys import KeyRecords
from store.mongo.webhooks import WebhookRecords


class MongoStore(Keeping, BenchmarkReads, CatalogReads, KeyRecords, ChangeLogReads, WebhookRecords):
    """The almanac's collections on MongoDB, every role of the interface (store.interface) on
    one database (store.mongo.connection). Each public coroutine is exactly one round trip."""

    embedded = False
