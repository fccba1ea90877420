"""Automatic persisted queries over POST and GET, shared through Redis, and trusted documents."""

import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette

from server.api_keys import create_key
from server.app import create_app
from server.settings import Settings
from store.queries import Store
from tests.conftest import http_client
from tests.http.test_contract import CONTRACT, GENERAL

COVERAGE = "{ modelCardCoverage { labsRead } }"


def persisted(query: str) -> dict[str, Any]:
    sha256 = hashlib.sha256(query.encode()).hexdigest()
    return {"persistedQuery": {"version": 1, "sha256Hash": sha256}}


@pytest.fixture
def settings(budgets_in: dict[str, Any]) -> Settings:
    return Settings(**budgets_in)


async def test_miss_then_register_then_hit_over_post(
    client: httpx.AsyncClient, calls: Counter[str]
) -> None:
    miss = await client.post("/graphql", json={"extensions": persisted(COVERAGE)})
    assert miss.status_code == 200
    assert [e["extensions"]["code"] for e in miss.json()["errors"]] == ["PERSISTED_QUERY_NOT_FOUND"]
    assert "PersistedQueryNotFound" in miss.json()["errors"][0]["message"]
    assert calls == {}

    registered = await client.post(
        "/graphql", json={"query": COVERAGE, "extensions": persisted(COVERAGE)}
    )
    assert registered.json()["data"] == {"modelCardCoverage": {"labsRead": 52}}
    hit = await client.post("/graphql", json={"extensions": persisted(COVERAGE)})
    assert hit.json()["data"] == {"modelCardCoverage": {"labsRead": 52}}


async def test_hit_over_get_with_variables(client: httpx.AsyncClient) -> None:
    page = CONTRACT.read_text(encoding="utf-8")
    params = {
        "extensions": json.dumps(persisted(page)),
        "variables": json.dumps({"slug": GENERAL}),
    }
    miss = await client.get("/graphql", params=params)
    assert miss.json()["errors"][0]["extensions"]["code"] == "PERSISTED_QUERY_NOT_FOUND"
    registered = await client.get("/graphql", params={**params, "query": page})
    assert registered.json()["data"]["benchmark"]["slug"] == GENERAL
    hit = await client.get("/graphql", params=params)
    assert hit.status_code == 200
    assert hit.json()["data"] == registered.json()["data"]


async def test_hash_that_is_not_the_querys_is_refused(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/graphql", json={"query": COVERAGE, "extensions": persisted("{ other }")}
    )
    assert response.json()["errors"][0]["extensions"]["code"] == "PERSISTED_QUERY_HASH_MISMATCH"
    # Nothing was registered under that hash.
    again = await client.post("/graphql", json={"extensions": persisted("{ other }")})
    assert again.json()["errors"][0]["extensions"]["code"] == "PERSISTED_QUERY_NOT_FOUND"


async def test_processes_share_persisted_queries_in_redis(store: Store, redis_url: str) -> None:
    settings = Settings(redis_url=redis_url, redis_key_prefix="almanac-test-apq-shared:")
    one, two = create_app(settings, store), create_app(settings, store)
    await one.state.services.budgets.redis.flushdb()
    async with http_client(one) as first, http_client(two) as second:
        await first.post("/graphql", json={"query": COVERAGE, "extensions": persisted(COVERAGE)})
        hit = await second.post("/graphql", json={"extensions": persisted(COVERAGE)})
    assert hit.json()["data"] == {"modelCardCoverage": {"labsRead": 52}}
    for app in (one, two):
        await app.state.services.budgets.close()


@pytest.fixture
def manifest(tmp_path: Path) -> Path:
    path = tmp_path / "trusted-documents.json"
    path.write_text(json.dumps({hashlib.sha256(COVERAGE.encode()).hexdigest(): COVERAGE}))
    return path


@pytest.fixture
def trusted_app(store: Store, manifest: Path) -> Starlette:
    return create_app(Settings(trusted_documents=manifest), store)


async def test_trusted_mode_runs_registered_documents_only(
    trusted_app: Starlette, store: Store, calls: Counter[str]
) -> None:
    async with http_client(trusted_app) as http:
        by_hash = await http.post("/graphql", json={"extensions": persisted(COVERAGE)})
        assert by_hash.json()["data"] == {"modelCardCoverage": {"labsRead": 52}}
        by_id = await http.get(
            "/graphql",
            params={"documentId": "sha256:" + hashlib.sha256(COVERAGE.encode()).hexdigest()},
        )
        assert by_id.json()["data"] == {"modelCardCoverage": {"labsRead": 52}}
        by_text = await http.post("/graphql", json={"query": COVERAGE})
        assert by_text.json()["data"] == {"modelCardCoverage": {"labsRead": 52}}

        calls.clear()
        other = "{ categories { slug } }"
        refused = await http.post("/graphql", json={"query": other})
        assert refused.json()["errors"][0]["extensions"]["code"] == "DOCUMENT_NOT_TRUSTED"
        assert calls == {}
        # It cannot be registered either, as an automatic persisted query would be.
        register = await http.post(
            "/graphql", json={"query": other, "extensions": persisted(other)}
        )
        assert register.json()["errors"][0]["extensions"]["code"] == "DOCUMENT_NOT_TRUSTED"

        # Editors' admin keys may still run anything (GraphiQL, tooling).
        key = await create_key(store, "editor", "admin")
        admin = await http.post(
            "/graphql", json={"query": other}, headers={"Authorization": f"Bearer {key}"}
        )
        assert admin.json()["data"] == {"categories": [{"slug": "tool-use"}]}


def test_a_manifest_with_a_wrong_hash_is_refused_at_start(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"0" * 64: COVERAGE}))
    with pytest.raises(ValueError, match="is not the SHA-256 of its document"):
        create_app(Settings(trusted_documents=path))


async def test_a_manifest_id_means_nothing_without_trusted_documents(
    client: httpx.AsyncClient,
) -> None:
    response = await client.post("/graphql", json={"documentId": "3f2b8c0e9a1d4b7c"})
    error = response.json()["errors"][0]
    assert error["extensions"]["code"] == "PERSISTED_QUERY_NOT_FOUND"
    assert '"3f2b8c0e9a1d4b7c"' in error["message"]
