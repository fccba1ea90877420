"""GET answers carry a strong ETag that changes with the data; If-None-Match gives 304."""

from collections import Counter
from datetime import UTC, datetime

import httpx
import pytest

from editing.changes import Stamp
from editing.importer import import_dataset
from server.api_keys import create_key
from store import Store
from store.seed import load_bundled_dataset
from tests.conftest import GraphQLClient, skip_unless_required
from tests.http.reads.test_contract import CONTRACT, GENERAL

PAGE = {"query": CONTRACT.read_text(encoding="utf-8"), "variables": f'{{"slug": "{GENERAL}"}}'}
DESCRIBE = 'mutation { updateBenchmark(slug: "%s", input: {description: "%s"}) { revision } }'


async def test_etag_then_304_then_a_new_etag_after_a_write(
    client: httpx.AsyncClient, store: Store
) -> None:
    first = await client.get("/graphql", params=PAGE)
    assert first.status_code == 200
    etag = first.headers["ETag"]
    assert etag.startswith('"')
    assert not etag.startswith("W/")
    assert first.headers["Cache-Control"] == "public, max-age=0, must-revalidate"
    assert "Accept-Encoding" in first.headers["Vary"]

    revalidated = await client.get("/graphql", params=PAGE, headers={"If-None-Match": etag})
    assert revalidated.status_code == 304
    assert revalidated.content == b""
    assert revalidated.headers["ETag"] == etag
    assert "RateLimit-Remaining" in revalidated.headers

    key = await create_key(store, "editor", "admin")
    note = await client.post(
        "/graphql",
        json={"query": DESCRIBE % (GENERAL, "The General track, described anew.")},
        headers={"Authorization": f"Bearer {key}"},
    )
    assert "errors" not in note.json(), note.json()
    assert note.headers["Cache-Control"] == "no-store"

    changed = await client.get("/graphql", params=PAGE, headers={"If-None-Match": etag})
    assert changed.status_code == 200
    assert changed.headers["ETag"] != etag
    assert (
        changed.json()["data"]["benchmark"]["description"] == "The General track, described anew."
    )


async def test_etag_follows_the_answer_not_unrelated_writes(
    client: httpx.AsyncClient, store: Store
) -> None:
    coverage = {"query": "{ modelCardCoverage { labsRead } }"}
    etag = (await client.get("/graphql", params=coverage)).headers["ETag"]
    dataset = load_bundled_dataset()
    general = next(b for b in dataset["benchmarks"] if b["slug"] == GENERAL)
    general["reads"].append(
        {"read_on": "2026-11-20", "entries": general["reads"][0]["entries"][:3]}
    )
    await import_dataset(store, dataset, Stamp("test", datetime.now(UTC)))
    again = await client.get("/graphql", params=coverage, headers={"If-None-Match": etag})
    assert again.status_code == 304


async def test_gzip_is_a_representation_of_its_own(client: httpx.AsyncClient) -> None:
    plain = await client.get("/graphql", params=PAGE, headers={"Accept-Encoding": "identity"})
    zipped = await client.get("/graphql", params=PAGE, headers={"Accept-Encoding": "gzip"})
    assert "Content-Encoding" not in plain.headers
    assert zipped.headers["Content-Encoding"] == "gzip"
    assert zipped.headers["ETag"] == plain.headers["ETag"][:-1] + '-gzip"'
    assert zipped.num_bytes_downloaded < len(plain.content) / 3
    assert zipped.json()["data"] == plain.json()["data"]  # httpx decompressed it
    raw = await client.get(
        "/graphql",
        params=PAGE,
        headers={"Accept-Encoding": "gzip", "If-None-Match": zipped.headers["ETag"]},
    )
    assert raw.status_code == 304


async def test_keyed_answers_are_private(client: httpx.AsyncClient, store: Store) -> None:
    key = await create_key(store, "partner", "read")
    response = await client.get("/graphql", params=PAGE, headers={"Authorization": f"Bearer {key}"})
    assert response.headers["Cache-Control"].startswith("private")


@pytest.mark.parametrize(
    "params",
    [
        {"query": "{ nope }"},  # an error is not cached
        {"query": "{ modelCardCoverage { labsRead } }", "variables": "{}", "operationName": "X"},
    ],
)
async def test_failures_carry_no_etag(client: httpx.AsyncClient, params: dict[str, str]) -> None:
    response = await client.get("/graphql", params=params)
    assert "ETag" not in response.headers
    assert response.headers["Cache-Control"] == "no-store"


async def test_posts_are_not_cached(client: httpx.AsyncClient) -> None:
    response = await client.post("/graphql", json={"query": "{ modelCardCoverage { labsRead } }"})
    assert "ETag" not in response.headers
    assert response.headers["Cache-Control"] == "no-store"


async def test_graphiql_files_are_compressed(client: httpx.AsyncClient) -> None:
    response = await client.get("/graphiql/graphiql.css", headers={"Accept-Encoding": "gzip"})
    if response.status_code == 404:
        skip_unless_required("ALMANAC_REQUIRE_NPM", "GraphiQL's files are not installed (npm)")
    assert response.headers["Content-Encoding"] == "gzip"
    assert b".graphiql-container" in response.content


async def test_a_kept_answer_the_client_holds_costs_the_minimum(
    client: httpx.AsyncClient, calls: Counter[str]
) -> None:
    catalog = {"query": "{ benchmarks(first: 40) { nodes { slug leader { score } } } }"}
    first = await client.get("/graphql", params=catalog)
    assert first.json()["extensions"]["cost"]["requestedQueryCost"] > 40
    calls.clear()
    held = await client.get(
        "/graphql", params=catalog, headers={"If-None-Match": first.headers["etag"]}
    )
    assert held.status_code == 304
    assert held.headers["almanac-cost"] == "1"
    assert held.headers["etag"] == first.headers["etag"]
    assert calls == {}  # answered from the kept answer: nothing read, nothing run


async def test_a_cache_in_front_can_purge_exactly_what_a_change_touched(
    client: httpx.AsyncClient, admin: GraphQLClient
) -> None:
    page = {"query": '{ benchmark(slug: "code-interpreter-benchmark-general") { name } }'}
    answered = await client.get("/graphql", params=page)
    kept = await client.get("/graphql", params=page)
    download = await client.get("/benchmarks/code-interpreter-benchmark-general.csv")
    keys = set(answered.headers["surrogate-key"].split())
    assert {"all", "benchmark:code-interpreter-benchmark-general", "category:tool-use"} <= keys
    assert set(kept.headers["surrogate-key"].split()) == keys
    assert answered.headers["cache-tag"].split(",") == answered.headers["surrogate-key"].split()
    assert "benchmark:code-interpreter-benchmark-general" in download.headers["surrogate-key"]

    start = (await admin.data("{ changes(first: 0) { newestCursor } }"))["changes"]
    update = """mutation($slug: String!) {
      updateBenchmark(slug: $slug, input: {note: "Checked again."}) { revision } }"""
    await admin.data(update, slug="code-interpreter-benchmark-general")
    await admin.data('mutation { createLab(input: {slug: "far-lab", name: "Far Lab"}) { slug } }')
    feed = await admin.data(
        "query($after: String) { changes(after: $after) { nodes { kind purgeKeys } } }",
        after=start["newestCursor"],
    )
    touched, elsewhere = feed["changes"]["nodes"]
    assert (touched["kind"], elsewhere["kind"]) == ("BENCHMARK_UPDATED", "LAB_CREATED")
    assert keys & set(touched["purgeKeys"])  # the page is purged
    assert not keys & set(elsewhere["purgeKeys"])  # and kept for a change it did not read
