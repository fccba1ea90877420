"""When graphql-core stops validating a document, the refusal says why with the cause's code: a
document too large to check is refused for its size, a document with too many errors for them,
and only one that nests too deep for its depth."""

from typing import Any

import httpx

from server.app import create_app
from server.settings import Settings
from store import Store
from tests.conftest import http_client
from tests.http.protocol.test_odd_json import assert_answered


async def refusals(client: httpx.AsyncClient, query: str) -> list[dict[str, Any]]:
    response = await client.post("/graphql", json={"query": query})
    assert_answered(response)
    body = response.json()
    assert "data" not in body or body["data"] is None
    errors: list[dict[str, Any]] = body["errors"]
    return errors


def codes(errors: list[dict[str, Any]]) -> list[str]:
    return [error["extensions"]["code"] for error in errors]


async def test_a_flat_document_of_1200_fields_is_refused_for_its_size(
    client: httpx.AsyncClient,
) -> None:
    [error] = await refusals(client, "{ " + "__typename " * 1_200 + "}")
    assert error["extensions"]["code"] == "TOO_MANY_TOKENS"
    assert error["message"].startswith("The document is too large to check")


async def test_too_many_errors_are_said_as_such(client: httpx.AsyncClient) -> None:
    errors = await refusals(client, "{ " + " ".join(f"f{i}" for i in range(1_200)) + " }")
    assert codes(errors) == ["GRAPHQL_VALIDATION_FAILED"] * 101
    assert errors[-1]["message"] == (
        "Validation stopped after these 100 errors: fix them and send the document again."
    )


def fragment_chain(length: int) -> str:
    chain = " ".join(
        f"fragment F{i} on Benchmark {{ parent {{ ...F{i + 1} }} }}" for i in range(length)
    )
    return (
        f'{{ benchmark(slug: "x") {{ ...F0 }} }} {chain} fragment F{length} on Benchmark {{ name }}'
    )


async def test_depth_past_what_graphql_core_checks_is_refused_for_depth(store: Store) -> None:
    """With a depth limit above graphql-core's own, its abort is still said as depth."""
    app = create_app(Settings(max_depth=1_000), store)
    async with http_client(app) as http:
        [error] = await refusals(http, fragment_chain(300))
    await app.services.shared.budgets.close()
    assert error["extensions"]["code"] == "MAX_DEPTH_EXCEEDED"
    assert "more than 200 levels deep" in error["message"]
