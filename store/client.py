"""Opening the store: a real MongoDB by URI, or the embedded in-process store."""

from typing import Any

from mongomock_motor import AsyncMongoMockClient
from motor.motor_asyncio import AsyncIOMotorClient

from store.indexes import ensure_indexes
from store.queries import Store


def connect(mongodb_uri: str | None, database: str) -> Store:
    """A store on the given MongoDB, or on a fresh, empty embedded store when no URI is given."""
    if mongodb_uri:
        client: Any = AsyncIOMotorClient(mongodb_uri, appname="benchmark-almanac", tz_aware=True)
        return Store(client[database], embedded=False)
    return Store(AsyncMongoMockClient()[database], embedded=True)


async def prepare(store: Store) -> None:
    """Create the indexes (idempotently)."""
    await ensure_indexes(store.db)
