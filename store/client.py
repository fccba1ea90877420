"""Opening the store: a real MongoDB by URI, or the embedded in-process store."""

import logging
from typing import Any

from mongomock_motor import AsyncMongoMockClient
from motor.motor_asyncio import AsyncIOMotorClient

from store.indexes import ensure_indexes
from store.queries import Store
from store.seed import load_bundled_dataset, seed

log = logging.getLogger("almanac.store")


def connect(mongodb_uri: str | None, database: str) -> Store:
    """A store on the given MongoDB, or on a fresh embedded store when no URI is given."""
    if mongodb_uri:
        client: Any = AsyncIOMotorClient(mongodb_uri, appname="benchmark-almanac", tz_aware=True)
        return Store(client[database], embedded=False)
    return Store(AsyncMongoMockClient()[database], embedded=True)


async def prepare(store: Store) -> str:
    """Create the indexes; fill an embedded store with the bundled dataset.

    Returns a one-line description of the store for the start-up log.
    """
    await ensure_indexes(store.db)
    if not store.embedded:
        return f"MongoDB database '{store.db.name}'"
    summary = await seed(store, load_bundled_dataset())
    return (
        "embedded in-process store (no ALMANAC_MONGODB_URI set; data lives only in this process)"
        f" loaded with the bundled dataset: {summary.benchmarks} benchmarks,"
        f" {summary.models} tracked models"
    )
