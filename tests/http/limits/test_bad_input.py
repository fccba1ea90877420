"""Every malformed request gets a 4xx or a typed GraphQL error, never a stack trace or a 500."""

import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from server.api_keys import create_key
from server.settings import Settings
from store import Store
from tests.conftest import GraphQLClient

CATEGORIES = "{ categories { slug } }"


def only_error(response: httpx.Response) -> dict[str, Any]:
    errors = response.json()["errors"]
    assert len(errors) == 1, errors
    error: dict[str, Any] = errors[0]
    return error


@pytest.mark.parametrize(
    ("content", "content_type", "status", "code", "message_part"),
    [
        (b'{"query": ', "application/json", 400, "BAD_REQUEST", "not valid JSON"),
        (b"", "application/json", 400, "BAD_REQUEST", "body is empty"),
        (b"   ", "application/json", 400, "BAD_REQUEST", "body is empty"),
        (b"42", "application/json", 400, "BAD_REQUEST", "Expected a JSON object"),
        (b'"{ categories { slug } }"', "application/json", 400, "BAD_REQUEST", "JSON object"),
        (b"{}", "application/json", 400, "BAD_REQUEST", "No GraphQL query"),
        (b'{"query": 7}', "application/json", 400, "BAD_REQUEST", "`query` must be a string"),
        (
            b'{"query": "{ a }", "variables": [1]}',
            "application/json",
            400,
            "BAD_REQUEST",
            "variables",
        ),
        (
            b"{ categories { slug } }",
            "text/plain",
            415,
            "UNSUPPORTED_MEDIA_TYPE",
            "application/json",
        ),
        (b"{ categories { slug } }", "", 415, "UNSUPPORTED_MEDIA_TYPE", "no content type"),
        (b"query=x", "application/x-www-form-urlencoded", 415, "UNSUPPORTED_MEDIA_TYPE", "JSON"),
        (b"[]", "application/json", 400, "BAD_REQUEST", "batch is empty"),
        (b'[{"query": "{ a }"}, 7]', "application/json", 400, "BAD_REQUEST", "batch item 1"),
        (b'{"query": "{ a }", "extensions": 1}', "application/json", 400, "BAD_REQUEST", "object"),
        (
            b'{"extensions": {"persistedQuery": {"version": 2, "sha256Hash": "ab"}}}',
            "application/json",
            400,
            "BAD_REQUEST",
            "persistedQuery",
        ),
        (b'{"documentId": "md5:ab"}', "application/json", 400, "BAD_REQUEST", "documentId"),
    ],
)
async def test_malformed_posts(
    client: httpx.AsyncClient,
    content: bytes,
    content_type: str,
    status: int,
    code: str,
    message_part: str,
) -> None:
    headers = {"content-type": content_type} if content_type else {}
    response = await client.post("/graphql", content=content, headers=headers)
    assert response.status_code == status
    assert response.headers["content-type"] == "application/json"
    error = only_error(response)
    assert error["extensions"]["code"] == code
    assert message_part in error["message"]


@pytest.mark.parametrize(
    ("accept", "status"), [("application/json", 200), ("application/graphql-response+json", 400)]
)
async def test_unknown_operation_name(client: httpx.AsyncClient, accept: str, status: int) -> None:
    response = await client.post(
        "/graphql",
        json={"query": "query A { categories { slug } }", "operationName": "B"},
        headers={"accept": accept},
    )
    assert response.status_code == status
    assert only_error(response)["message"] == "The document holds no operation named 'B'."
    assert only_error(response)["extensions"]["code"] == "BAD_REQUEST"


async def test_mutation_over_get_is_refused(client: httpx.AsyncClient) -> None:
    mutation = 'mutation { createLab(input: {slug: "x", name: "X"}) { slug } }'
    response = await client.get("/graphql", params={"query": mutation})
    assert response.status_code == 405
    assert only_error(response)["extensions"]["code"] == "METHOD_NOT_ALLOWED"


async def test_get_with_broken_variables(client: httpx.AsyncClient) -> None:
    response = await client.get("/graphql", params={"query": CATEGORIES, "variables": "{oops"})
    assert response.status_code == 400
    assert "not valid JSON" in only_error(response)["message"]


async def test_unsupported_method_and_path(client: httpx.AsyncClient) -> None:
    response = await client.put("/graphql", json={"query": CATEGORIES})
    assert response.status_code == 405
    assert only_error(response)["extensions"]["code"] == "METHOD_NOT_ALLOWED"
    # What `Allow` advertises is answered: HEAD as GET (the server sends no body).
    assert "HEAD" in response.headers["allow"]
    get = await client.get("/graphql", params={"query": CATEGORIES})
    head = await client.head("/graphql", params={"query": CATEGORIES})
    assert head.status_code == get.status_code == 200
    assert head.headers["etag"] == get.headers["etag"]
    response = await client.get("/no-such-path")
    assert response.status_code == 404
    assert only_error(response)["extensions"]["code"] == "NOT_FOUND"


@pytest.fixture
def settings() -> Settings:
    return Settings(max_body_bytes=1_000)


async def test_oversized_body_with_length(client: httpx.AsyncClient) -> None:
    padding = " " * 2_000
    response = await client.post("/graphql", json={"query": CATEGORIES + padding})
    assert response.status_code == 413
    assert only_error(response)["extensions"]["code"] == "PAYLOAD_TOO_LARGE"
    assert "1000 bytes" in only_error(response)["message"]


async def test_oversized_body_without_length(client: httpx.AsyncClient) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"query": "{ categories { slug } }'
        for _ in range(20):
            yield b" " * 100
        yield b'"}'

    response = await client.post(
        "/graphql", content=chunks(), headers={"content-type": "application/json"}
    )
    assert "content-length" not in response.request.headers
    assert response.status_code == 413


@pytest.mark.parametrize(
    ("query", "variables", "code", "message_part"),
    [
        ("{ categories { slug ", {}, "GRAPHQL_PARSE_FAILED", "Syntax Error"),
        ("{ categories { nope } }", {}, "GRAPHQL_VALIDATION_FAILED", "nope"),
        ("{ benchmark(slug: 1) { name } }", {}, "GRAPHQL_VALIDATION_FAILED", "String"),
        ("query($s: String!) { benchmark(slug: $s) { name } }", {}, "BAD_USER_INPUT", "$s"),
        (
            "query($n: Int!) { benchmarks(first: $n) { totalCount } }",
            {"n": "x"},
            "BAD_USER_INPUT",
            "$n",
        ),
        ("{ benchmarks(first: 101) { totalCount } }", {}, "BAD_USER_INPUT", "between 0 and 100"),
        ("{ benchmarks(first: 100000) { totalCount } }", {}, "BAD_USER_INPUT", "100000"),
        ("{ benchmarks(first: -1) { totalCount } }", {}, "BAD_USER_INPUT", "-1"),
        ("{ models(first: 500) { totalCount } }", {}, "BAD_USER_INPUT", "`first`"),
        ('{ benchmarks(after: "bogus") { totalCount } }', {}, "BAD_USER_INPUT", "`after`"),
        ('{ node(id: "%%%") { id } }', {}, "BAD_USER_INPUT", "`id`"),
        (
            '{ benchmark(slug: "code-interpreter-benchmark-general") { siblings(first: 101) '
            "{ totalCount } } }",
            {},
            "BAD_USER_INPUT",
            "`first`",
        ),
        (
            '{ benchmarks(filter: {status: "IN_USE"}) { totalCount } }',
            {},
            "GRAPHQL_VALIDATION_FAILED",
            "Status",
        ),
    ],
)
async def test_graphql_errors_are_typed(
    graphql: GraphQLClient, query: str, variables: dict[str, Any], code: str, message_part: str
) -> None:
    body = await graphql(query, **variables)
    codes = [error["extensions"]["code"] for error in body["errors"]]
    assert codes == [code]
    assert message_part in body["errors"][0]["message"]


async def test_failing_resolver_is_masked_and_logged(
    graphql: GraphQLClient,
    store: Store,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def broken() -> None:
        raise RuntimeError("the database caught fire at 10.0.0.7")

    monkeypatch.setattr(store, "site_figures", broken)
    with caplog.at_level(logging.ERROR):
        body = await graphql("{ categories { slug } modelCardCoverage { labsRead } }")
    error = body["errors"][0]
    assert error["extensions"] == {"code": "INTERNAL_SERVER_ERROR"}
    assert error["path"] == ["modelCardCoverage"]
    assert "fire" not in str(body)
    assert body["data"] is None
    # The operator sees what happened, with the traceback.
    logged = [r for r in caplog.records if r.exc_info and "fire" in str(r.exc_info[1])]
    assert logged


@pytest.mark.parametrize(
    ("query", "variables", "python", "json"),
    [
        (
            "query($s: String!) { benchmark(slug: $s) { name } }",
            {"s": {"$ne": None}},
            "None",
            '{"$ne":null}',
        ),
        (
            "query($n: Int!) { benchmarks(first: $n) { totalCount } }",
            {"n": [True, None]},
            "True",
            "[true,null]",
        ),
        (
            'mutation($i: LeaderboardReadInput!) { recordLeaderboardRead(benchmark: "x", input: $i) { recorded } }',
            {"i": {"readOn": {"a": False}, "entries": []}},
            "False",
            '{"a":false}',
        ),
        ("query($id: ID!) { node(id: $id) { id } }", {"id": "zz'z"}, "'zz", '"zz\'z"'),
    ],
)
async def test_refused_values_are_quoted_as_json_never_as_python(
    client: httpx.AsyncClient,
    store: Store,
    query: str,
    variables: dict[str, Any],
    python: str,
    json: str,
) -> None:
    # With an admin key: a change without one is refused before its variables are read.
    headers = {"Authorization": f"Bearer {await create_key(store, 'editor', 'admin')}"}
    payload = {"query": query, "variables": variables}
    response = await client.post("/graphql", json=payload, headers=headers)
    message = only_error(response)["message"]
    assert json in message
    assert python not in message
    assert only_error(response)["extensions"]["code"] in (
        "BAD_USER_INPUT",
        "GRAPHQL_VALIDATION_FAILED",
    )


async def test_an_unexpected_failure_outside_graphql_is_graphql_shaped(
    app: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(request: Any) -> Any:
        raise RuntimeError("/srv/almanac/secret.py exploded")

    monkeypatch.setattr("server.app.healthz", broken)
    app.router.routes = [r for r in app.router.routes if getattr(r, "path", "") != "/healthz"]
    app.add_route("/healthz", broken)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://almanac.test") as http:
        response = await http.get("/healthz")
    assert response.status_code == 500
    error = only_error(response)
    assert error["extensions"]["code"] == "INTERNAL_SERVER_ERROR"
    assert "secret" not in response.text
