"""Shared fixtures: a store with the bundled dataset, and the real app over HTTP.

With ALMANAC_TEST_MONGODB_URI set, the store is a fresh database on that MongoDB (dropped
afterwards) instead of the embedded store, so the same tests run against a real server.
"""

import os
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette

from server.app import create_app
from server.settings import Settings
from store.client import connect, prepare
from store.queries import Store
from store.seed import load_bundled_dataset, seed

TEST_MONGODB_URI = os.environ.get("ALMANAC_TEST_MONGODB_URI")


@pytest.fixture
async def store() -> AsyncIterator[Store]:
    if TEST_MONGODB_URI is None:
        embedded = connect(None, "almanac")
        await prepare(embedded)
        yield embedded
        return
    real = connect(TEST_MONGODB_URI, f"almanac_test_{uuid.uuid4().hex[:12]}")
    await prepare(real)
    await seed(real, load_bundled_dataset())
    real.version.known = True  # Only this test writes to its database.
    yield real
    await real.db.client.drop_database(real.db.name)


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

    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http

    async def __call__(self, query: str, **variables: Any) -> dict[str, Any]:
        response = await self.http.post("/graphql", json={"query": query, "variables": variables})
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
