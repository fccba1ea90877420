"""Browsers may call the API from the configured origins, and from no other."""

import httpx
import pytest

from server.settings import Settings

SITE = "https://almanac.example"


@pytest.fixture
def settings() -> Settings:
    return Settings(cors_origins=[SITE, "https://partner.example"])


async def preflight_of(client: httpx.AsyncClient, method: str, headers: str) -> httpx.Response:
    """The browser's question before a `method` request from SITE sending `headers`."""
    return await client.options(
        "/graphql",
        headers={
            "Origin": SITE,
            "Access-Control-Request-Method": method,
            "Access-Control-Request-Headers": headers,
        },
    )


async def test_allowed_origin_gets_the_headers(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/graphql", json={"query": "{ __typename }"}, headers={"Origin": SITE}
    )
    assert response.headers["Access-Control-Allow-Origin"] == SITE
    assert "RateLimit-Remaining" in response.headers["Access-Control-Expose-Headers"]
    preflight = await preflight_of(client, "POST", "authorization, content-type")
    assert preflight.status_code == 200
    assert preflight.headers["Access-Control-Allow-Origin"] == SITE
    assert "authorization" in preflight.headers["Access-Control-Allow-Headers"].lower()


async def test_a_page_may_send_and_read_the_freshness_headers(client: httpx.AsyncClient) -> None:
    """Read-your-writes from a browser: the preflight lets `Almanac-Min-Change` through, and
    the page may read `Almanac-Change-Cursor` and `Age` (the browser hides any other)."""
    preflight = await preflight_of(client, "GET", "almanac-min-change")
    assert preflight.status_code == 200
    assert "almanac-min-change" in preflight.headers["Access-Control-Allow-Headers"].lower()
    response = await client.post(
        "/graphql", json={"query": "{ __typename }"}, headers={"Origin": SITE}
    )
    exposed = {
        name.strip().lower()
        for name in response.headers["Access-Control-Expose-Headers"].split(",")
    }
    assert {"almanac-change-cursor", "age"} <= exposed


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


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        ("http://localhost:5173", True),
        ("http://127.0.0.1:3000", True),
        ("http://localhost", True),
        ("https://localhost:5173", False),
        ("http://localhost.evil.example", False),
        ("http://127.0.0.1.evil.example:80", False),
    ],
)
async def test_local_origins_are_allowed_as_dev_serve_allows_them(
    store: object, origin: str, allowed: bool
) -> None:
    """`almanac serve --allow-local-origins` (`./dev serve`): pages on a local dev server, any
    port, and no other origin."""
    from server.app import create_app
    from server.settings import LOCAL_ORIGINS
    from tests.conftest import http_client

    app = create_app(Settings(cors_origin_regex=LOCAL_ORIGINS), store)  # type: ignore[arg-type]
    async with http_client(app) as http:
        preflight = await http.options(
            "/graphql",
            headers={
                "Origin": origin,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "content-type",
            },
        )
    assert preflight.status_code == (200 if allowed else 400)
    assert (preflight.headers.get("Access-Control-Allow-Origin") == origin) is allowed


async def test_with_no_origin_allowed_a_preflight_is_refused_as_cors(store: object) -> None:
    """A page on a dev server learns that CORS is the matter, not that OPTIONS is unknown."""
    from server.app import create_app
    from tests.conftest import http_client

    app = create_app(Settings(), store)  # type: ignore[arg-type]
    async with http_client(app) as http:
        preflight = await http.options(
            "/graphql",
            headers={"Origin": "http://localhost:5173", "Access-Control-Request-Method": "POST"},
        )
    assert preflight.status_code == 400
    assert "Disallowed CORS origin" in preflight.json()["errors"][0]["message"]


async def test_with_no_origin_allowed_no_route_answers_a_preflight(store: object) -> None:
    """A preflight anywhere (an asset's route included) is refused as CORS; an OPTIONS request
    that is no preflight is a method the route does not take."""
    from server.app import create_app
    from tests.conftest import http_client

    app = create_app(Settings(), store)  # type: ignore[arg-type]
    preflight = {"Origin": "http://localhost:5173", "Access-Control-Request-Method": "GET"}
    async with http_client(app) as http:
        refused = [
            await http.options(path, headers=preflight)
            for path in ("/graphiql/graphiql.min.js", "/benchmarks/any.csv", "/no-such-page")
        ]
        plain = await http.options("/graphql")
    for response in refused:
        assert response.status_code == 400
        assert "Disallowed CORS origin" in response.json()["errors"][0]["message"]
    assert plain.status_code == 405
    assert plain.json()["errors"][0]["extensions"]["code"] == "METHOD_NOT_ALLOWED"
