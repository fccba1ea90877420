"""Malformed GraphQL multipart requests through the real app: each refused with a typed 400
(BAD_REQUEST), never a 500, whoever sends it (parsing happens before any key is checked)."""

import json

import httpx

from server.graphql.request import MAX_JSON_DEPTH
from tests.conftest import GraphQLClient

QUERY = "mutation($f: [Upload!]!) { importResults(files: $f, dryRun: true) { rowCount } }"


async def post(client: GraphQLClient, operations: str, files_map: str) -> httpx.Response:
    return await client.http.post(
        "/graphql",
        data={"operations": operations, "map": files_map},
        files={"0": ("a.json", b"{}")},
        headers=client.headers,
    )


def assert_bad_request(response: httpx.Response, words: str) -> None:
    assert response.status_code == 400, response.text
    [error] = response.json()["errors"]
    assert error["extensions"]["code"] == "BAD_REQUEST"
    assert words in error["message"]


async def test_operations_nested_deeper_than_a_json_body_may_is_refused(
    graphql: GraphQLClient,
) -> None:
    deep = "[" * 300 + "]" * 300
    operations = f'{{"query": "{{ __typename }}", "variables": {{"a": {deep}}}}}'
    answer = await post(graphql, operations, "{}")
    assert_bad_request(answer, f"more than {MAX_JSON_DEPTH} levels deep")


async def test_a_map_path_that_is_not_a_string_is_refused(admin: GraphQLClient) -> None:
    operations = json.dumps({"query": QUERY, "variables": {"f": [None]}})
    for files_map in ('{"0": [5]}', '{"0": [["variables.f.0"]]}', '{"0": "variables.f.0"}'):
        answer = await post(admin, operations, files_map)
        assert_bad_request(answer, "`map`")
