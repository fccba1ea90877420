"""Opening the store: MongoDB by URI, or else the embedded store in a data directory."""

from pathlib import Path
from typing import Any

from motor.motor_asyncio import AsyncIOMotorClient
from pymongo.errors import PyMongoError
from pymongo.uri_parser import parse_uri

from store.indexes import ensure_indexes
from store.mongo import MongoStore
from store.queries import Store
from store.sqlite import SqliteStore


def connect(mongodb_uri: str | None, database: str, data_dir: Path) -> Store:
    """The store on the given MongoDB, or the embedded one in `data_dir` when no URI is given."""
    if mongodb_uri:
        client: AsyncIOMotorClient[Any] = AsyncIOMotorClient(
            mongodb_uri, appname="benchmark-almanac", tz_aware=True
        )
        return MongoStore(client[database])
    return SqliteStore(data_dir)


def mongodb_uri_problem(uri: str) -> str | None:
    """Why `uri` is no MongoDB connection string, if it is not (checked without connecting; an
    SRV address is looked up only when the store opens)."""
    srv = "mongodb+srv://"
    try:
        parse_uri("mongodb://" + uri.removeprefix(srv) if uri.startswith(srv) else uri)
    except (PyMongoError, ValueError) as error:
        return str(error)
    return None


async def prepare(store: Store) -> None:
    """Create MongoDB's indexes (idempotently); the embedded store makes its own on opening."""
    if isinstance(store, MongoStore):
        await ensure_indexes(store.db)
