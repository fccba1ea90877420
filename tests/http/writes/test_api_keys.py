"""Keys: reads stay open; every change needs a key in force with the admin scope."""

from typing import Any

import httpx
import pytest

from server.api_keys import create_key, revoke_key
from store import Store
from tests.conftest import GraphQLClient, snapshot

CREATE_LAB = 'mutation { createLab(input: {slug: "acme", name: "Acme"}) { slug name } }'


async def test_an_admin_key_may_change_the_almanac(admin: GraphQLClient) -> None:
    data = await admin.data(CREATE_LAB)
    assert data == {"createLab": {"slug": "acme", "name": "Acme"}}


async def test_without_a_key_a_change_is_refused_and_nothing_written(
    graphql: GraphQLClient, store: Store
) -> None:
    before = await snapshot(store)
    body = await graphql(CREATE_LAB)
    assert "data" not in body  # refused before it runs
    assert body["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
    assert "Authorization: Bearer" in body["errors"][0]["message"]
    assert body["extensions"]["cost"]["requestedQueryCost"] == 1  # a refusal's minimum
    assert await snapshot(store) == before


async def test_a_read_only_key_may_read_but_not_change(
    graphql: GraphQLClient, store: Store
) -> None:
    reader = graphql.with_key(await create_key(store, "partner", "read"))
    assert (await reader.data("{ modelCardCoverage { labsRead } }"))["modelCardCoverage"]
    before = await snapshot(store)
    body = await reader(CREATE_LAB)
    assert body["errors"][0]["extensions"]["code"] == "FORBIDDEN"
    assert "'partner'" in body["errors"][0]["message"]
    assert body["extensions"]["cost"]["requestedQueryCost"] == 1
    assert await snapshot(store) == before


async def test_a_wrong_key_is_refused_with_401(client: httpx.AsyncClient, store: Store) -> None:
    real = await create_key(store, "editor", "admin")
    prefix, key_id, secret = real.split("_")
    wrong_secret = f"{prefix}_{key_id}_{'0' * len(secret)}"
    for authorization in (
        f"Bearer {wrong_secret}",
        "Bearer alm_000000000000_" + secret,
        "Bearer not-a-key",
        f"Basic {real}",
        "Bearer ",
    ):
        before = await snapshot(store)
        response = await client.post(
            "/graphql", json={"query": CREATE_LAB}, headers={"Authorization": authorization}
        )
        assert response.status_code == 401, authorization
        assert response.headers["www-authenticate"].startswith("Bearer")
        assert response.json()["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
        assert await snapshot(store) == before


async def test_a_revoked_key_stops_working_on_the_next_request(
    graphql: GraphQLClient, store: Store
) -> None:
    key = await create_key(store, "leaving", "admin")
    editor = graphql.with_key(key)
    assert await editor.data(CREATE_LAB)
    assert await revoke_key(store, "leaving")
    response = await editor.http.post(
        "/graphql",
        json={"query": 'mutation { createLab(input: {slug: "b", name: "B"}) { slug } }'},
        headers=editor.headers,
    )
    assert response.status_code == 401
    assert response.json()["errors"][0]["message"] == "The API key was revoked."
    assert not await revoke_key(store, "leaving"), "a key is revoked once"


async def test_only_a_hash_of_the_secret_is_stored(store: Store) -> None:
    key = await create_key(store, "editor", "admin")
    secret = key.split("_")[2]
    assert secret not in await snapshot(store)


async def test_a_request_reads_its_key_once(
    client: httpx.AsyncClient, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = await create_key(store, "partner", "read")
    reads: list[str] = []
    read_key = store.api_key

    async def counted(key_id: str) -> Any:
        reads.append(key_id)
        return await read_key(key_id)

    monkeypatch.setattr(store, "api_key", counted)
    query = {"query": "{ benchmarks(first: 1) { totalCount } }"}
    headers = {"Authorization": f"Bearer {key}"}
    first = await client.post("/graphql", json=query, headers=headers)  # run: no kept answer
    assert first.json()["data"]["benchmarks"]["totalCount"] > 0
    assert len(reads) == 1
    await client.post("/graphql", json=query, headers=headers)  # its answer kept
    assert len(reads) == 2
