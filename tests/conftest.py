"""Shared fixtures: a store with the bundled dataset, the real app over HTTP, and Redis.

With ALMANAC_TEST_MONGODB_URI set, the store is a fresh database on that MongoDB (dropped
afterwards) instead of the embedded store, so the same tests run against a real server.
Redis tests use ALMANAC_TEST_REDIS_URL, or start Debian's `redis-server` on loopback; without
either they are skipped, unless ALMANAC_REQUIRE_REDIS is set (as CI sets it).
"""

import contextlib
import inspect
import json
import os
import queue
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import httpx
import pytest
from mongomock_motor import AsyncMongoMockClient, enabled_gridfs_integration

from editing.importer import seed
from server.api_keys import create_key
from server.app import AlmanacApp, create_app
from server.settings import Settings
from store import Store
from store.client import connect, prepare
from store.mongo import MongoStore

TEST_MONGODB_URI = os.environ.get("ALMANAC_TEST_MONGODB_URI")


STORES = ["sqlite", "mongodb" if TEST_MONGODB_URI else "mongomock"]


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test's embedded store lives in a directory of its own, never the user's. Its
    reads see each change at once (no stale answers), unless a test sets a staleness bound."""
    directory = tmp_path / "almanac-data"
    monkeypatch.setenv("ALMANAC_DATA_DIR", str(directory))
    monkeypatch.setenv("ALMANAC_MAX_STALENESS_SECONDS", "0")
    return directory


@pytest.fixture(params=STORES)
async def store(request: pytest.FixtureRequest, data_dir: Path) -> AsyncIterator[Store]:
    """The bundled dataset, on each store: the embedded SQLite one, and MongoDB (mongomock, a
    stand-in for its query semantics, or a real server with ALMANAC_TEST_MONGODB_URI)."""
    opened = await empty_store(request.param, data_dir)
    await seed(opened)
    yield opened
    if isinstance(opened, MongoStore) and TEST_MONGODB_URI:
        await opened.db.client.drop_database(opened.db.name)
    await opened.close()


async def empty_store(kind: str, data_dir: Path) -> Store:
    """A store with its indexes and nothing else."""
    opened: Store
    if kind == "sqlite":
        opened = connect(None, "almanac", data_dir)
    elif kind == "mongomock":
        opened = MongoStore(AsyncMongoMockClient()["almanac"])
    else:
        opened = connect(TEST_MONGODB_URI, f"almanac_test_{uuid.uuid4().hex[:12]}", data_dir)
    opened.version.known = True  # Only this test writes to its database.
    await prepare(opened)
    return opened


@pytest.fixture
def gridfs_on_mongomock() -> Iterator[None]:
    """On mongomock, motor's own GridFS code runs over mongomock's collections
    (mongomock_motor's GridFS integration, which patches pymongo's type checks for them); with
    ALMANAC_TEST_MONGODB_URI, over a real MongoDB."""
    with enabled_gridfs_integration():
        yield


@pytest.fixture
def settings() -> Settings:
    return Settings()


@pytest.fixture
async def app(store: Store, settings: Settings) -> AsyncIterator[AlmanacApp]:
    created = create_app(settings, store)
    yield created
    await created.services.shared.budgets.close()


@pytest.fixture
async def client(app: AlmanacApp) -> AsyncIterator[httpx.AsyncClient]:
    async with http_client(app) as http:
        yield http


def http_client(app: AlmanacApp, address: str = "127.0.0.1") -> httpx.AsyncClient:
    """A client of the app through its ASGI interface, calling from `address`."""
    transport = httpx.ASGITransport(app=app, client=(address, 50000))
    return httpx.AsyncClient(transport=transport, base_url="http://almanac.test")


ROUND_TRIPS = [
    name
    for name, member in inspect.getmembers(Store)
    if not name.startswith("_")
    and callable(member)
    and name not in {"replace", "is_empty", "dump", "follow_changes", "close", "seed_lock"}
]


@pytest.fixture
def calls(store: Store, monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Counts every call at the store boundary, by method."""
    counted: Counter[str] = Counter()

    def counting(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        if inspect.isasyncgenfunction(method):  # a cursor: one round trip a batch

            async def batches(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
                async for batch in method(*args, **kwargs):
                    counted[name] += 1
                    yield batch

            return batches

        async def call(*args: Any, **kwargs: Any) -> Any:
            counted[name] += 1
            return await method(*args, **kwargs)

        return call

    for name in ROUND_TRIPS:
        monkeypatch.setattr(store, name, counting(name, getattr(store, name)))
    return counted


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """A Redis to test against: the configured one, or a `redis-server` started for the run."""
    if configured := os.environ.get("ALMANAC_TEST_REDIS_URL"):
        yield configured
        return
    with redis_server(free_port()) as url:
        yield url


def skip_unless_required(flag: str, reason: str) -> NoReturn:
    """Skip the test for `reason` (something it needs is not installed), or, where CI sets
    `flag` (ALMANAC_REQUIRE_...), fail it: there, nothing may be skipped for want of a tool."""
    if os.environ.get(flag):
        pytest.fail(f"{reason}, and {flag} is set")
    pytest.skip(reason)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def redis_server(port: int) -> Iterator[str]:
    """Debian's `redis-server` on loopback at `port`, as long as the block runs: its URL. Skipped
    without it, unless ALMANAC_REQUIRE_REDIS is set (as CI sets it)."""
    server = shutil.which("redis-server")
    if server is None:
        skip_unless_required(
            "ALMANAC_REQUIRE_REDIS", "redis-server is not installed (apt-get install redis-server)"
        )
    arguments = ["--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    process = subprocess.Popen([server, *arguments], stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait()


@pytest.fixture(params=["in-process", "redis"])
def budgets_in(request: pytest.FixtureRequest) -> dict[str, Any]:
    """Settings placing budgets and persisted queries in this process, or in a fresh Redis
    namespace (so that tests never share a bucket)."""
    if request.param == "in-process":
        return {}
    url = request.getfixturevalue("redis_url")
    return {"redis_url": url, "redis_key_prefix": f"almanac-test-{uuid.uuid4().hex}:"}


class GraphQLClient:
    """Posts GraphQL requests through the real app and returns the decoded JSON."""

    def __init__(self, http: httpx.AsyncClient, key: str | None = None) -> None:
        self.http = http
        self.headers = {"Authorization": f"Bearer {key}"} if key else {}

    def with_key(self, key: str) -> "GraphQLClient":
        return GraphQLClient(self.http, key)

    async def __call__(self, query: str, **variables: Any) -> dict[str, Any]:
        response = await self.http.post(
            "/graphql", json={"query": query, "variables": variables}, headers=self.headers
        )
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    async def data(self, query: str, **variables: Any) -> dict[str, Any]:
        """The `data` of a request that must succeed without errors."""
        body = await self(query, **variables)
        assert "errors" not in body, body["errors"]
        data: dict[str, Any] = body["data"]
        return data


@pytest.fixture
def graphql(client: httpx.AsyncClient) -> GraphQLClient:
    return GraphQLClient(client)


@pytest.fixture
async def admin(graphql: GraphQLClient, store: Store) -> GraphQLClient:
    """A client sending an admin key named `editor`."""
    return graphql.with_key(await create_key(store, "editor", "admin"))


async def snapshot(store: Store) -> str:
    """Every document of every collection, exactly as stored: equal snapshots, equal databases."""
    collections = {
        name: sorted(json.dumps(doc, sort_keys=True, default=str) for doc in docs)
        for name, docs in (await store.dump()).items()
    }
    return json.dumps(collections, indent=1, sort_keys=True)


KEY_LINE = re.compile(r"Admin API key .*: (alm_\w+)")


@contextlib.contextmanager
def live_almanac(**settings: str) -> Iterator[tuple[str, str]]:
    """`almanac serve` in a process of its own on a free port, with ALMANAC_* `settings`:
    its URL and the admin key it made. Its log is read as it comes, so it never blocks."""
    with almanac_process(**{"shutdown_drain_seconds": "0", **settings}) as served:
        yield served.url, served.key


@dataclass
class Served:
    process: subprocess.Popen[str]
    url: str
    key: str
    log: list[str]


@contextlib.contextmanager
def almanac_process(*arguments: str, **settings: str) -> Iterator[Served]:
    """`live_almanac`, with its process (terminated at the end if it still runs) and its
    log lines as they come; `arguments` are more options of `almanac serve`."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    environment = {k: v for k, v in os.environ.items() if not k.startswith("ALMANAC_")}
    environment["ALMANAC_DATA_DIR"] = tempfile.mkdtemp(prefix="almanac-data-")
    environment.update({f"ALMANAC_{name.upper()}": value for name, value in settings.items()})
    process = subprocess.Popen(
        [sys.executable, "-m", "server.cli", "serve", "--port", str(port), *arguments],
        env=environment,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    keys: queue.Queue[str] = queue.Queue()
    log: list[str] = []

    def read_log() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            log.append(line)
            if match := KEY_LINE.search(line):
                keys.put(match.group(1))

    threading.Thread(target=read_log, daemon=True).start()
    url = f"http://127.0.0.1:{port}"
    try:
        key = keys.get(timeout=30)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                httpx.get(f"{url}/healthz")
                break
            except httpx.TransportError:
                time.sleep(0.05)
        yield Served(process, url, key, log)
    finally:
        if process.poll() is None:
            process.terminate()
        process.wait()
