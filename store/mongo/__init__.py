"""The store on MongoDB (through motor), one module per role of the interface
(store.interface) on one database: documents' writes, benchmarks' and the catalog's reads,
keys, the change log, webhooks, and keeping the store as a whole."""

from store.mongo.store import MongoStore

__all__ = ["MongoStore"]
