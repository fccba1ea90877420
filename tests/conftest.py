"""Shared fixtures: a store with the bundled dataset, and the real app over HTTP.

With ALMANAC_TEST_MONGODB_URI set, the store is a fresh database on that MongoDB (dropped
afterwards) instead of the embedded store, so the same tests run against a real server.
"""

import json
import os
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette

from editing.importer import seed
from server.api_keys import create_key
from server.app import create_app
from server.settings import Settings
from store.client import connect, prepare
from store.queries import Store

TEST_MONGODB_URI = os.environ.get("ALMANAC_TEST_MONGODB_URI")


@pytest.fixture
async def store() -> AsyncIterator[Store]:
    opened = await empty_store()
    await seed(opened)
    yield opened
    if not opened.embedded:
        await opened.db.client.drop_database(opened.db.name)


async def empty_store() -> Store:
    """A store with indexes and nothing else: embedded, or a new database on the test MongoDB."""
    if TEST_MONGODB_URI is None:
        opened = connect(None, "almanac")
    else:
        opened = connect(TEST_MONGODB_URI, f"almanac_test_{uuid.uuid4().hex[:12]}")
        opened.version.known = True  # Only this test writes to its database.
    await prepare(opened)
    return opened


@pytest.fixture
def settings() -> Settings:
    return Settings()


@pytest.fixture
def app(store: Store, settings: Settings) -> Starlette:
    return create_app(settings, store)


@pytest.fixture
async def client(app: Starlette) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://almanac.test") as http:
        yield http


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
    collections = {}
    for name in sorted(await store.db.list_collection_names()):
        docs = await store.db[name].find({}).to_list(None)
        collections[name] = sorted(json.dumps(doc, sort_keys=True, default=str) for doc in docs)
    return json.dumps(collections, indent=1)
