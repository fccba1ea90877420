"""The operation priced is the one that runs: a document that does not say which is refused
before anything is priced or run, over POST, GET, batches and persisted queries."""

import hashlib
import json
from collections import Counter
from typing import Any

import httpx
import pytest

# Costs far over the limit, beside one that costs nothing: pricing the small one and running
# the big one was a way around the cost limit and the budgets.
BIG = "query Big { benchmarks(first: 100) { nodes { slug leaderboard(first: 1000) { score } siblings(first: 100) { nodes { leaderboard(first: 1000) { score } } } } } }"
TWO_OPERATIONS = BIG + " query Small { __typename }"
STRICT = {"accept": "application/graphql-response+json"}


def refused(body: dict[str, Any]) -> str:
    """The one error's code, after checking nothing ran and the refusal cost the minimum."""
    assert "data" not in body
    assert body["extensions"]["cost"]["requestedQueryCost"] == 1
    [error] = body["errors"]
    return str(error["extensions"]["code"])


@pytest.mark.parametrize(
    ("operation_name", "message_part"),
    [(None, "holds 2 operations"), ("Missing", "no operation named 'Missing'")],
)
async def test_post_without_a_runnable_operation_is_refused(
    client: httpx.AsyncClient, calls: Counter[str], operation_name: str | None, message_part: str
) -> None:
    payload = {"query": TWO_OPERATIONS, "operationName": operation_name}
    response = await client.post("/graphql", json=payload)
    assert response.status_code == 200
    body = response.json()
    assert refused(body) == "BAD_REQUEST"
    assert message_part in body["errors"][0]["message"]
    strict = await client.post("/graphql", json=payload, headers=STRICT)
    assert strict.status_code == 400
    assert refused(strict.json()) == "BAD_REQUEST"
    assert calls == {}


async def test_named_operation_is_priced_as_the_one_that_runs(client: httpx.AsyncClient) -> None:
    big = await client.post("/graphql", json={"query": TWO_OPERATIONS, "operationName": "Big"})
    assert [e["extensions"]["code"] for e in big.json()["errors"]] == ["MAX_COST_EXCEEDED"]
    small = await client.post("/graphql", json={"query": TWO_OPERATIONS, "operationName": "Small"})
    assert small.json()["data"] == {"__typename": "Query"}


async def test_get_without_a_runnable_operation_is_refused(
    client: httpx.AsyncClient, calls: Counter[str]
) -> None:
    response = await client.get("/graphql", params={"query": TWO_OPERATIONS}, headers=STRICT)
    assert response.status_code == 400
    assert refused(response.json()) == "BAD_REQUEST"
    assert calls == {}


async def test_batch_operation_without_a_runnable_operation_is_refused(
    client: httpx.AsyncClient, calls: Counter[str]
) -> None:
    response = await client.post(
        "/graphql", json=[{"query": "{ __typename }"}, {"query": TWO_OPERATIONS}]
    )
    first, second = response.json()
    assert first["data"] == {"__typename": "Query"}
    assert refused(second) == "BAD_REQUEST"
    assert calls == {}


async def test_persisted_document_without_a_runnable_operation_is_refused(
    client: httpx.AsyncClient, calls: Counter[str]
) -> None:
    sha256 = hashlib.sha256(TWO_OPERATIONS.encode()).hexdigest()
    extensions = {"persistedQuery": {"version": 1, "sha256Hash": sha256}}
    registered = await client.post(
        "/graphql", json={"query": TWO_OPERATIONS, "extensions": extensions}
    )
    assert refused(registered.json()) == "BAD_REQUEST"
    by_hash = await client.get("/graphql", params={"extensions": json.dumps(extensions)})
    assert refused(by_hash.json()) == "BAD_REQUEST"
    assert calls == {}
