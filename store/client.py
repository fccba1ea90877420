"""Opening the store: MongoDB by URI, or else the embedded store in a data directory."""

from datetime import timedelta
from pathlib import Path
from typing import Any

from motor.motor_asyncio import AsyncIOMotorClient
from pymongo.errors import ConnectionFailure, PyMongoError, ServerSelectionTimeoutError
from pymongo.uri_parser import parse_uri

from store.changes import RETENTION
from store.indexes import ensure_indexes
from store.interface import Store
from store.mongo import MongoStore
from store.queries import StoreUnavailable
from store.sqlite import SqliteStore

# How long a MongoDB call waits for a server to answer (pymongo's serverSelectionTimeoutMS).
DEFAULT_TIMEOUT_SECONDS = 30.0


def connect(
    mongodb_uri: str | None,
    database: str,
    data_dir: Path,
    *,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
    retention: timedelta = RETENTION,
) -> Store:
    """The store on the given MongoDB, or the embedded one in `data_dir` when no URI is given
    (`StoreUnavailable` if its file cannot be read)."""
    if mongodb_uri:
        client: AsyncIOMotorClient[Any] = AsyncIOMotorClient(
            mongodb_uri,
            appname="benchmark-almanac",
            tz_aware=True,
            serverSelectionTimeoutMS=round(timeout_seconds * 1000),
        )
        return MongoStore(client[database], retention=retention)
    return SqliteStore(data_dir, retention=retention)


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
    """Create MongoDB's indexes (idempotently); the embedded store makes its own on opening.
    `StoreUnavailable`, naming the hosts, if MongoDB does not answer in time."""
    if isinstance(store, MongoStore):
        try:
            await ensure_indexes(store.db)
        except (ServerSelectionTimeoutError, ConnectionFailure) as error:
            client = store.db.client
            hosts = (
                ", ".join(
                    f"{host}:{port}"
                    for host, port in client.topology_description.server_descriptions()
                )
                or "the configured hosts"
            )
            seconds = client.options.server_selection_timeout
            raise StoreUnavailable(
                f"MongoDB at {hosts} did not answer within {seconds:g} s "
                f"({type(error).__name__}): check ALMANAC_MONGODB_URI and that the server "
                "runs; ALMANAC_MONGODB_TIMEOUT_SECONDS sets how long to wait."
            ) from None
