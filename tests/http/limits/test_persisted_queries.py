"""Automatic persisted queries over POST and GET, shared through Redis, and trusted documents."""

import hashlib
import json
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest

from api_errors import ApiError, ErrorCode
from schema import Services
from server.api_keys import create_key
from server.app import AlmanacApp, create_app
from server.graphql.persisted import REDIS_ENTRY_BYTES, LocalDocuments, PersistedQueries
from server.manifests import trusted_manifest
from server.settings import Settings
from store import Store
from tests.conftest import free_port, http_client
from tests.http.reads.test_contract import CONTRACT, GENERAL

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
    assert miss.json()["errors"][0]["message"] == (
        "PersistedQueryNotFound: send the query text with this hash once."
    )
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
    assert response.json()["errors"][0]["message"] == (
        "The persisted query's sha256Hash is not the SHA-256 of the query sent with it."
    )
    # Nothing was registered under that hash.
    again = await client.post("/graphql", json={"extensions": persisted("{ other }")})
    assert again.json()["errors"][0]["extensions"]["code"] == "PERSISTED_QUERY_NOT_FOUND"


async def test_processes_share_persisted_queries_in_redis(store: Store, redis_url: str) -> None:
    settings = Settings(redis_url=redis_url, redis_key_prefix="almanac-test-apq-shared:")
    one, two = create_app(settings, store), create_app(settings, store)
    shared: Any = one.services.shared.budgets  # RedisBudgets
    await shared.redis.flushdb()
    async with http_client(one) as first, http_client(two) as second:
        await first.post("/graphql", json={"query": COVERAGE, "extensions": persisted(COVERAGE)})
        hit = await second.post("/graphql", json={"extensions": persisted(COVERAGE)})
    assert hit.json()["data"] == {"modelCardCoverage": {"labsRead": 52}}
    for app in (one, two):
        await app.services.shared.budgets.close()


@pytest.fixture
def manifest(tmp_path: Path) -> Path:
    path = tmp_path / "trusted-documents.json"
    path.write_text(json.dumps({hashlib.sha256(COVERAGE.encode()).hexdigest(): COVERAGE}))
    return path


@pytest.fixture
def trusted_app(store: Store, manifest: Path) -> AlmanacApp:
    return create_app(Settings(trusted_documents=manifest), store)


async def test_trusted_mode_runs_registered_documents_only(
    trusted_app: AlmanacApp, store: Store, calls: Counter[str]
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
        assert refused.json()["errors"][0]["message"] == (
            "This API runs only its registered documents; this one is not among them."
        )
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
    assert error["message"] == (
        'Unknown document "3f2b8c0e9a1d4b7c": this API knows documents by id only from its '
        'trusted documents; send the text, or documentId "sha256:<hash>".'
    )


@pytest.mark.parametrize("method", ["GET", "POST"])
async def test_a_request_without_a_query_or_a_hash_is_refused(
    client: httpx.AsyncClient, method: str
) -> None:
    if method == "GET":
        response = await client.get("/graphql", params={"variables": "{}"})
    else:
        response = await client.post("/graphql", json={"variables": {}})
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["message"] == "No GraphQL query found in the request: send `query`."
    assert error["extensions"]["code"] == "BAD_REQUEST"


async def test_each_way_a_document_is_found_is_named() -> None:
    services = Services.create(
        Settings().document_limits,
        document_cache_bytes=1 << 20,
        cost_cache_bytes=1 << 20,
        answer_cache_bytes=0,
    )
    queries = PersistedQueries(LocalDocuments(1 << 20), services)
    assert await queries.document_text(COVERAGE, None, may_run_any=False) == (COVERAGE, "sent")
    with pytest.raises(ApiError) as nothing:  # (the view refuses such a request before)
        await queries.document_text(None, None, may_run_any=False)
    refusal = nothing.value
    assert (refusal.message, refusal.status, refusal.code) == (
        "No GraphQL query found in the request: send `query`.",
        400,
        ErrorCode.BAD_REQUEST,
    )
    registering = await queries.document_text(COVERAGE, persisted(COVERAGE), may_run_any=False)
    assert registering == (COVERAGE, "registered")
    assert await queries.document_text(None, persisted(COVERAGE), False) == (COVERAGE, "hit")
    refused = "{ " * 3
    assert await queries.document_text(refused, persisted(refused), False) == (refused, "sent")
    trusted = PersistedQueries(LocalDocuments(1 << 20), services, trusted_manifest([COVERAGE]))
    assert await trusted.document_text(COVERAGE, None, may_run_any=False) == (COVERAGE, "trusted")


NOT_FOUND = "PERSISTED_QUERY_NOT_FOUND"


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("{ modelCardCoverage { labsRead }", "GRAPHQL_PARSE_FAILED"),
        ("{ " + "__typename " * 5_001 + "}", "TOO_MANY_TOKENS"),
        ("{ " + "a: __typename " * 31 + "}", "TOO_MANY_ALIASES"),
        (
            "{ benchmarks { nodes { family { parent { family { parent { family { parent { family "
            "{ parent { family { parent { family { parent { family { parent { slug } } } } } } } "
            "} } } } } } } } } }",
            "MAX_DEPTH_EXCEEDED",
        ),
        ("{ ...A } fragment A on Query { ...B } fragment B on Query { ...A }", "FRAGMENT_CYCLE"),
    ],
)
async def test_a_text_is_kept_only_if_it_passes_the_document_limits(
    client: httpx.AsyncClient, text: str, code: str
) -> None:
    registered = await client.post("/graphql", json={"query": text, "extensions": persisted(text)})
    assert code in {e["extensions"]["code"] for e in registered.json()["errors"]}
    again = await client.post("/graphql", json={"extensions": persisted(text)})
    assert [e["extensions"]["code"] for e in again.json()["errors"]] == [NOT_FOUND]


def padded(number: int, size: int = 4_000) -> str:
    """A document of about `size` bytes that passes every limit: a comment is no token."""
    return f"# {number} {'x' * size}\n{{ __typename }}"


async def found(http: httpx.AsyncClient, text: str) -> bool:
    answer = (await http.post("/graphql", json={"extensions": persisted(text)})).json()
    if "errors" in answer:
        assert [e["extensions"]["code"] for e in answer["errors"]] == [NOT_FOUND]
        return False
    assert answer["data"] == {"__typename": "Query"}
    return True


@pytest.fixture
def bounded(budgets_in: dict[str, Any]) -> Settings:
    """Persisted queries in 64 KiB (in process, or in Redis): an entry at most 8 KiB."""
    return Settings(**budgets_in, persisted_query_cache_bytes=64 * 1024)


async def test_the_store_is_bounded_least_recently_used_first_out(
    store: Store, bounded: Settings
) -> None:
    app = create_app(bounded, store)
    async with http_client(app) as http:
        for number in range(40):  # some 160 KB sent: ten times what fits
            text = padded(number)
            await http.post("/graphql", json={"query": text, "extensions": persisted(text)})
            if number % 4 == 0:
                assert await found(http, padded(0))  # used again: kept
        assert await found(http, padded(0))
        assert await found(http, padded(39))
        assert not await found(http, padded(1))
        assert not await found(http, padded(20))
        # Larger than an eighth of the store: not kept, nor does it push the others out.
        huge = padded(40, size=9_000)
        registered = await http.post(
            "/graphql", json={"query": huge, "extensions": persisted(huge)}
        )
        assert registered.json()["data"] == {"__typename": "Query"}
        assert not await found(http, huge)
        assert await found(http, padded(39))
        if bounded.redis_url is not None:
            documents: Any = app.services.shared.persisted.documents  # RedisDocuments
            redis = documents.redis
            keys = [key async for key in redis.scan_iter(f"{bounded.redis_key_prefix}apq*")]
            held = sum([await redis.memory_usage(key) for key in keys])
            assert held < 2 * bounded.persisted_query_cache_bytes
            texts, tally = keys_named(bounded.redis_key_prefix)
            entries = await redis.hgetall(texts)
            assert int(await redis.hget(tally, "bytes")) == sum(
                len(sha) + len(text) + REDIS_ENTRY_BYTES for sha, text in entries.items()
            )
            assert await redis.zcard(f"{bounded.redis_key_prefix}apq:used") == len(entries)
    await app.services.shared.budgets.close()


def keys_named(prefix: str) -> tuple[str, str]:
    return f"{prefix}apq:texts", f"{prefix}apq:tally"


async def test_a_redis_store_whose_texts_were_lost_starts_its_tally_again(
    store: Store, redis_url: str
) -> None:
    prefix = f"almanac-test-{uuid.uuid4().hex}:"
    settings = Settings(
        redis_url=redis_url, redis_key_prefix=prefix, persisted_query_cache_bytes=64 * 1024
    )
    app = create_app(settings, store)
    documents: Any = app.services.shared.persisted.documents  # RedisDocuments
    redis = documents.redis
    texts, tally = keys_named(prefix)
    async with http_client(app) as http:
        for number in range(3):
            text = padded(number)
            await http.post("/graphql", json={"query": text, "extensions": persisted(text)})
        await redis.delete(texts, f"{prefix}apq:used")  # as an eviction by Redis itself would
        await redis.hset(tally, "bytes", 10**9)
        text = padded(3)
        await http.post("/graphql", json={"query": text, "extensions": persisted(text)})
        assert await found(http, text)
        sha = persisted(text)["persistedQuery"]["sha256Hash"]
        assert int(await redis.hget(tally, "bytes")) == len(sha) + len(text) + REDIS_ENTRY_BYTES
    await app.services.shared.budgets.close()


def exactly(size: int) -> str:
    """A document that passes every limit, whose entry in Redis counts exactly `size` bytes."""
    frame = "# \n{ __typename }"
    return "# " + "x" * (size - 64 - REDIS_ENTRY_BYTES - len(frame)) + "\n{ __typename }"


async def test_an_entry_larger_than_an_eighth_of_the_redis_store_is_not_kept(
    store: Store, redis_url: str
) -> None:
    # An entry may hold an eighth of the store: 8,192 bytes of 64 KiB.
    settings = Settings(
        redis_url=redis_url,
        redis_key_prefix=f"almanac-test-{uuid.uuid4().hex}:",
        persisted_query_cache_bytes=64 * 1024,
    )
    app = create_app(settings, store)
    async with http_client(app) as http:
        for text in (exactly(8_192), exactly(8_193)):
            await http.post("/graphql", json={"query": text, "extensions": persisted(text)})
        assert await found(http, exactly(8_192))
        assert not await found(http, exactly(8_193))
    await app.services.shared.budgets.close()


async def test_without_redis_a_persisted_query_is_a_miss_and_requests_are_answered(
    store: Store,
) -> None:
    app = create_app(Settings(redis_url=f"redis://127.0.0.1:{free_port()}/0"), store)
    async with http_client(app) as http:
        sent = await http.post(
            "/graphql", json={"query": COVERAGE, "extensions": persisted(COVERAGE)}
        )
        assert sent.json()["data"] == {"modelCardCoverage": {"labsRead": 52}}
        assert not await found(http, COVERAGE)
    await app.services.shared.budgets.close()


@pytest.mark.parametrize(
    "persisted_query",
    [
        "0" * 64,
        {"version": 2, "sha256Hash": "0" * 64},
        {"version": None, "sha256Hash": "0" * 64},
        {"version": 1},
        {"version": 1, "sha256Hash": 7},
    ],
)
async def test_a_malformed_persisted_query_is_refused(
    client: httpx.AsyncClient, persisted_query: Any
) -> None:
    response = await client.post(
        "/graphql", json={"query": COVERAGE, "extensions": {"persistedQuery": persisted_query}}
    )
    [error] = response.json()["errors"]
    assert error["message"] == (
        '`extensions.persistedQuery` must read {"version": 1, "sha256Hash": "<hex>"}.'
    )
    assert error["extensions"]["code"] == "BAD_REQUEST"


async def test_a_persisted_query_without_its_version_is_of_version_1(
    client: httpx.AsyncClient,
) -> None:
    sha256 = persisted(COVERAGE)["persistedQuery"]["sha256Hash"].upper()  # any case
    extensions = {"persistedQuery": {"sha256Hash": sha256}}
    await client.post("/graphql", json={"query": COVERAGE, "extensions": extensions})
    hit = await client.post("/graphql", json={"extensions": extensions})
    assert hit.json()["data"] == {"modelCardCoverage": {"labsRead": 52}}
