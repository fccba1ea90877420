"""Browsers may call the API from the configured origins, and from no other."""

import httpx
import pytest

from server.settings import Settings

SITE = "https://almanac.example"


@pytest.fixture
def settings() -> Settings:
    return Settings(cors_origins=[SITE, "https://partner.example"])


async def test_allowed_origin_gets_the_headers(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/graphql", json={"query": "{ __typename }"}, headers={"Origin": SITE}
    )
    assert response.headers["Access-Control-Allow-Origin"] == SITE
    assert "RateLimit-Remaining" in response.headers["Access-Control-Expose-Headers"]
    preflight = await client.options(
        "/graphql",
        headers={
            "Origin": SITE,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type",
        },
    )
    assert preflight.status_code == 200
    assert preflight.headers["Access-Control-Allow-Origin"] == SITE
    assert "authorization" in preflight.headers["Access-Control-Allow-Headers"].lower()


async def test_other_origins_are_refused(client: httpx.AsyncClient) -> None:
    evil = "https://evil.example"
    response = await client.post(
        "/graphql", json={"query": "{ __typename }"}, headers={"Origin": evil}
    )
    assert "Access-Control-Allow-Origin" not in response.headers
    preflight = await client.options(
        "/graphql", headers={"Origin": evil, "Access-Control-Request-Method": "POST"}
    )
    assert preflight.status_code == 400
    assert "Access-Control-Allow-Origin" not in preflight.headers
    error = preflight.json()["errors"][0]
    assert error["extensions"]["code"] == "BAD_REQUEST"
    assert "Disallowed CORS origin" in error["message"]


async def test_no_origin_is_allowed_unless_configured(store: object) -> None:
    from server.app import create_app
    from tests.conftest import http_client

    app = create_app(Settings(), store)  # type: ignore[arg-type]
    async with http_client(app) as http:
        response = await http.post(
            "/graphql", json={"query": "{ __typename }"}, headers={"Origin": SITE}
        )
    assert "Access-Control-Allow-Origin" not in response.headers
