"""Opening the store: MongoDB by URI, or else the embedded store in a data directory."""

from pathlib import Path
from typing import Any

from motor.motor_asyncio import AsyncIOMotorClient

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


async def prepare(store: Store) -> None:
    """Create MongoDB's indexes (idempotently); the embedded store makes its own on opening."""
    if isinstance(store, MongoStore):
        await ensure_indexes(store.db)
