"""No JSON a client sends gets a 500: values nested past the limit are refused with BAD_REQUEST
before any work, and odd values anywhere (variables, extensions, the body itself, GET's query
parameters, a write's input) get a typed error or an answer. Property tests (hypothesis), run
with a fixed seed so the suite stays stable."""

import json
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server.graphql.request import MAX_JSON_DEPTH
from tests.conftest import GraphQLClient

QUERY = """
query($slug: String!, $first: Int, $on: Date) {
  benchmark(slug: $slug) { name leaderboard(first: $first, asOf: $on) { modelName score } }
}"""
RECORD = """
mutation($slug: String!, $input: LeaderboardReadInput!) {
  recordLeaderboardRead(benchmark: $slug, input: $input, dryRun: true) { recorded }
}"""
CATEGORIES = "{ categories { slug } }"

PROPERTY = settings(
    max_examples=50,
    derandomize=True,  # the same examples every run: a failure is a bug, never a fluke
    database=None,
    deadline=None,  # no timing assertions
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30)
    | st.sampled_from(["", "2026-02-30", "code-interpreter-benchmark-general", "\x00\u202e"])
)


def nested_value(depth: int, shape: str) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value] if shape == "list" else {"a": value}
    return value


# Nested far past the limit, as text: Python's own encoder would give up first.
depths = st.integers(min_value=MAX_JSON_DEPTH - 2, max_value=1_100)
shapes = st.sampled_from(["list", "object"])
# Within what Python's encoder (the test's) takes.
deep_values = st.builds(
    nested_value, st.integers(min_value=MAX_JSON_DEPTH - 2, max_value=400), shapes
)
values = st.recursive(
    scalars | deep_values,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def nested(depth: int, shape: str, inside: str = "1") -> str:
    opening, closing = ("[", "]") if shape == "list" else ('{"a":', "}")
    return opening * depth + inside + closing * depth


def assert_answered(response: httpx.Response) -> None:
    """A 4xx or an answer, with a GraphQL-shaped body and no internal error in it."""
    assert response.status_code < 500, response.text
    body = response.json()
    documents = body if isinstance(body, list) else [body]
    for document in documents:
        for error in document.get("errors", []):
            assert error["extensions"]["code"] != "INTERNAL_SERVER_ERROR", error


async def post(client: httpx.AsyncClient, body: str, **headers: str) -> httpx.Response:
    return await client.post(
        "/graphql", content=body.encode(), headers={"content-type": "application/json", **headers}
    )


@pytest.mark.parametrize("where", ["variables", "extensions", "batch", "body"])
@pytest.mark.parametrize("shape", ["list", "object"])
async def test_json_nested_past_the_limit_is_refused_before_any_work(
    client: httpx.AsyncClient, where: str, shape: str
) -> None:
    deep = nested(MAX_JSON_DEPTH, shape)  # with the body around it, one level too deep
    body = {
        "variables": f'{{"query": "{CATEGORIES}", "variables": {{"slug": {deep}}}}}',
        "extensions": f'{{"query": "{CATEGORIES}", "extensions": {deep}}}',
        "batch": nested(MAX_JSON_DEPTH + 1, shape),
        "body": nested(MAX_JSON_DEPTH + 1, "object"),
    }[where]
    response = await post(client, body)
    assert response.status_code == 400, response.text
    [error] = response.json()["errors"]
    assert error["extensions"]["code"] == "BAD_REQUEST"
    assert f"more than {MAX_JSON_DEPTH} levels deep" in error["message"]


async def test_json_at_the_limit_is_read(client: httpx.AsyncClient) -> None:
    """Unused variables at the deepest the API reads: the request runs."""
    deep = nested(MAX_JSON_DEPTH - 2, "list")
    response = await post(client, f'{{"query": "{CATEGORIES}", "variables": {{"x": {deep}}}}}')
    assert response.status_code == 200
    assert "errors" not in response.json()


async def test_get_refuses_deep_variables_too(client: httpx.AsyncClient) -> None:
    variables = json.dumps({"slug": "x"})[:-1] + ', "deep": ' + nested(300, "list") + "}"
    response = await client.get("/graphql", params={"query": CATEGORIES, "variables": variables})
    assert response.status_code == 400
    assert response.json()["errors"][0]["extensions"]["code"] == "BAD_REQUEST"


@PROPERTY
@given(depth=depths, shape=shapes, where=st.sampled_from(["variables", "extensions", "body"]))
async def test_no_nesting_gets_a_500(
    client: httpx.AsyncClient, depth: int, shape: str, where: str
) -> None:
    deep = nested(depth, shape)
    body = {
        "variables": f'{{"query": {json.dumps(QUERY)}, "variables": {{"slug": {deep}}}}}',
        "extensions": f'{{"query": "{CATEGORIES}", "extensions": {deep}}}',
        "body": deep,
    }[where]
    assert_answered(await post(client, body))


@PROPERTY
@given(variables=st.dictionaries(st.sampled_from(["slug", "first", "on", "x"]), values))
async def test_no_variables_get_a_500(client: httpx.AsyncClient, variables: Any) -> None:
    assert_answered(await client.post("/graphql", json={"query": QUERY, "variables": variables}))


@PROPERTY
@given(body=values)
async def test_no_body_gets_a_500(client: httpx.AsyncClient, body: Any) -> None:
    assert_answered(await post(client, json.dumps(body)))
    batch = [{"query": CATEGORIES, "extensions": body, "operationName": body}]
    assert_answered(await post(client, json.dumps(batch)))


@PROPERTY
@given(
    variables=st.dictionaries(st.text(max_size=5), values),
    extensions=values,
    name=st.text(max_size=20),
)
async def test_no_query_parameters_get_a_500(
    client: httpx.AsyncClient, variables: Any, extensions: Any, name: str
) -> None:
    params = {
        "query": QUERY,
        "variables": json.dumps(variables),
        "extensions": json.dumps(extensions),
        "operationName": name,
    }
    assert_answered(await client.get("/graphql", params=params))


@PROPERTY
@given(
    entries=st.lists(
        st.dictionaries(
            st.sampled_from(["modelName", "score", "setting", "source", "note", "publishedOn"]),
            values,
        ),
        max_size=3,
    ),
    read_on=values,
)
async def test_no_write_input_gets_a_500(admin: GraphQLClient, entries: Any, read_on: Any) -> None:
    read = {"readOn": read_on, "entries": entries}
    response = await admin.http.post(
        "/graphql",
        json={
            "query": RECORD,
            "variables": {"slug": "code-interpreter-benchmark-general", "input": read},
        },
        headers=admin.headers,
    )
    assert_answered(response)
