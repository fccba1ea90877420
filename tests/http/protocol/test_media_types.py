"""application/graphql-response+json as GraphQL over HTTP describes it, beside JSON."""

import httpx
import pytest

NEW = "application/graphql-response+json"


@pytest.mark.parametrize(
    ("accept", "media_type"),
    [
        (None, "application/json"),
        ("*/*", "application/json"),
        ("application/json", "application/json"),
        (NEW, NEW),
        (f"{NEW}, application/json;q=0.9", NEW),
        (f"application/json, {NEW};q=0.5", "application/json"),
        ("application/*", "application/json"),
        (f"{NEW};q=0, */*", "application/json"),
    ],
)
async def test_negotiation(client: httpx.AsyncClient, accept: str | None, media_type: str) -> None:
    headers = {"accept": accept} if accept else {}
    response = await client.post("/graphql", json={"query": "{ __typename }"}, headers=headers)
    assert response.status_code == 200
    assert response.headers["content-type"] == media_type
    assert response.json()["data"] == {"__typename": "Query"}


async def test_nothing_acceptable_is_406(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/graphql", json={"query": "{ __typename }"}, headers={"accept": "text/csv"}
    )
    assert response.status_code == 406
    assert response.json()["errors"][0]["extensions"]["code"] == "NOT_ACCEPTABLE"


@pytest.mark.parametrize(
    ("query", "json_status", "new_status"),
    [
        ("{ categories { slug ", 200, 400),  # parse failure: no data
        ("{ nope }", 200, 400),  # validation failure: no data
        ("query($n: Int!) { benchmarks(first: $n) { totalCount } }", 200, 400),  # no variable
        ('{ benchmark(slug: "nope") { name } }', 200, 200),  # data (null benchmark)
        ("{ benchmarks(first: 101) { totalCount } }", 200, 400),  # refused before it runs
        ('{ node(id: "nope") { id } }', 200, 200),  # field error: data with a null node
    ],
)
async def test_status_codes(
    client: httpx.AsyncClient, query: str, json_status: int, new_status: int
) -> None:
    legacy = await client.post("/graphql", json={"query": query})
    assert legacy.status_code == json_status
    strict = await client.post("/graphql", json={"query": query}, headers={"accept": NEW})
    assert strict.status_code == new_status
    assert strict.headers["content-type"] == NEW
