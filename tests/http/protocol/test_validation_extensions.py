"""A validation extension added to the schema applies to every way a document reaches it over
HTTP: POST, GET, batches and persisted queries (Strawberry's pipeline is the only one)."""

import functools
import hashlib
import json
from typing import Any

import httpx
import pytest
from strawberry.extensions import MaxAliasesLimiter

from schema import schema

THREE_ALIASES = (
    "{ a: modelCardCoverage { labsRead } b: modelCardCoverage { labsRead } c: __typename }"
)
SHA256 = hashlib.sha256(THREE_ALIASES.encode()).hexdigest()
PERSISTED = {"persistedQuery": {"version": 1, "sha256Hash": SHA256}}


@pytest.fixture
def one_alias_at_most(monkeypatch: pytest.MonkeyPatch) -> None:
    extension = functools.partial(MaxAliasesLimiter, 1)
    monkeypatch.setattr(schema, "extensions", [*schema.extensions, extension])


def refused_by_the_extension(body: dict[str, Any]) -> bool:
    messages = [error["message"] for error in body.get("errors", [])]
    return "data" not in body and any("aliases" in message for message in messages)


async def test_without_the_extension_the_document_runs(client: httpx.AsyncClient) -> None:
    body = (await client.post("/graphql", json={"query": THREE_ALIASES})).json()
    assert body["data"]["c"] == "Query"


@pytest.mark.usefixtures("one_alias_at_most")
async def test_over_post(client: httpx.AsyncClient) -> None:
    body = (await client.post("/graphql", json={"query": THREE_ALIASES})).json()
    assert refused_by_the_extension(body)
    assert body["errors"][0]["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"


@pytest.mark.usefixtures("one_alias_at_most")
async def test_over_get(client: httpx.AsyncClient) -> None:
    response = await client.get("/graphql", params={"query": THREE_ALIASES})
    assert refused_by_the_extension(response.json())
    assert "ETag" not in response.headers


@pytest.mark.usefixtures("one_alias_at_most")
async def test_in_a_batch(client: httpx.AsyncClient) -> None:
    batch = [{"query": THREE_ALIASES}, {"query": "{ __typename }"}]
    refused, allowed = (await client.post("/graphql", json=batch)).json()
    assert refused_by_the_extension(refused)
    assert allowed["data"] == {"__typename": "Query"}


@pytest.mark.usefixtures("one_alias_at_most")
async def test_as_a_persisted_query(client: httpx.AsyncClient) -> None:
    registered = await client.post(
        "/graphql", json={"query": THREE_ALIASES, "extensions": PERSISTED}
    )
    assert refused_by_the_extension(registered.json())
    by_hash = await client.get("/graphql", params={"extensions": json.dumps(PERSISTED)})
    assert refused_by_the_extension(by_hash.json())
    by_document_id = await client.post("/graphql", json={"documentId": f"sha256:{SHA256}"})
    assert refused_by_the_extension(by_document_id.json())
