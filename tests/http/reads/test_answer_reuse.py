"""Repeated queries reuse their answer until the data changes, and never reuse a failure."""

import asyncio
import json
from collections import Counter
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from editing.changes import Stamp
from editing.importer import import_dataset
from server.app import create_app
from server.settings import Settings
from store import Store
from store.seed import load_bundled_dataset
from store.sqlite import SqliteStore
from tests.conftest import GraphQLClient, http_client
from tests.http.reads.test_contract import CONTRACT, GENERAL
from tests.server.observability.test_logs import written
from tests.store.test_changes import another_process, changed

PAGE = {"query": CONTRACT.read_text(encoding="utf-8"), "variables": {"slug": GENERAL}}
COVERAGE = {"query": "{ modelCardCoverage { launchPostsRead } }"}


async def test_a_data_change_is_seen_at_once(client: httpx.AsyncClient, store: Store) -> None:
    first = await client.post("/graphql", json=PAGE)
    again = await client.post("/graphql", json=PAGE)
    assert again.json()["data"] == first.json()["data"]
    assert first.json()["data"]["benchmark"]["leader"]["score"] == 82.8

    dataset = load_bundled_dataset()
    general = next(b for b in dataset["benchmarks"] if b["slug"] == GENERAL)
    [read] = general["reads"]
    rows = [
        {**row, "score": 99.9 if row["model_name"].startswith("GPT-4") else row["score"]}
        for row in read["entries"]
    ]
    general["reads"].append({"read_on": "2026-11-20", "entries": rows})
    summary = await import_dataset(store, dataset, Stamp("test", datetime.now(UTC)))
    assert summary.count("updated") == 1

    after = (await client.post("/graphql", json=PAGE)).json()
    assert after["data"]["benchmark"]["leader"]["score"] == 99.9


async def test_get_and_post_answers_agree(client: httpx.AsyncClient) -> None:
    post = await client.post("/graphql", json=COVERAGE)
    get = await client.get("/graphql", params=COVERAGE)
    get_again = await client.get("/graphql", params=COVERAGE)
    assert post.json()["data"] == get.json()["data"] == get_again.json()["data"]
    assert get.json()["data"] == {"modelCardCoverage": {"launchPostsRead": 522}}


async def test_a_failure_is_not_reused(
    client: httpx.AsyncClient, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    figures = store.site_figures

    async def failing() -> None:
        raise ConnectionError("database unreachable")

    monkeypatch.setattr(store, "site_figures", failing)
    failed = (await client.post("/graphql", json=COVERAGE)).json()
    assert failed["errors"][0]["extensions"]["code"] == "INTERNAL_SERVER_ERROR"
    monkeypatch.setattr(store, "site_figures", figures)
    recovered = (await client.post("/graphql", json=COVERAGE)).json()
    assert "errors" not in recovered
    assert recovered["data"] == {"modelCardCoverage": {"launchPostsRead": 522}}


async def test_concurrent_misses_execute_once(
    client: httpx.AsyncClient, store: Store, calls: Counter[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    read = store.benchmark_with_neighbourhood

    async def slow_read(*args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(0.05)  # holds the first execution open while the others arrive
        return await read(*args, **kwargs)

    monkeypatch.setattr(store, "benchmark_with_neighbourhood", slow_read)
    answers = await asyncio.gather(*(client.post("/graphql", json=PAGE) for _ in range(6)))
    assert {json.dumps(a.json()["data"], sort_keys=True) for a in answers} == {
        json.dumps(answers[0].json()["data"], sort_keys=True)
    }
    assert all(a.json()["extensions"]["cost"]["requestedQueryCost"] > 1 for a in answers)
    assert calls["benchmark_with_neighbourhood"] == 1  # one execution for all six


async def executes(client: httpx.AsyncClient, calls: Counter[str], query: str) -> bool:
    """Whether answering `query` ran it (it read the store) rather than reusing a kept answer."""
    before = sum(calls.values())
    response = await client.post("/graphql", json={"query": query})
    assert response.status_code == 200, response.text
    assert "errors" not in response.json(), response.text
    return sum(calls.values()) > before


async def warm(client: httpx.AsyncClient, calls: Counter[str], *queries: str) -> None:
    """Each query answered once, then found kept."""
    for query in queries:
        await client.post("/graphql", json={"query": query})
        assert not await executes(client, calls, query)


THE_PAGE = "{ benchmark(slug: %s) { name leader { modelName } siblings { nodes { slug } } } }"
PAGE_OF_GENERAL = THE_PAGE % json.dumps(GENERAL)
NAME_ONLY = "{ benchmark(slug: %s) { name leader { modelName } } }"
CATALOG = "{ benchmarks(first: 2) { totalCount nodes { slug name leader { modelName } } } }"
UPDATE = """mutation($slug: String!, $input: BenchmarkInput!) {
  updateBenchmark(slug: $slug, input: $input) { revision } }"""
UPDATE_MODEL = """mutation($slug: String!, $input: ModelInput!) {
  updateModel(slug: $slug, input: $input) { revision } }"""


@pytest.fixture
async def elsewhere(admin: GraphQLClient) -> str:
    """A benchmark in a category of its own, and a tracked model no leaderboard names: what
    no answer about the bundled benchmarks reads."""
    await admin.data(
        'mutation { createCategory(input: {slug: "elsewhere", name: "Elsewhere"}) { slug } }'
    )
    await admin.data(
        """mutation { createBenchmark(slug: "far-bench", input: {name: "Far Bench",
             metric: {name: "Accuracy", unit: PERCENT}, category: "elsewhere"}) { slug } }"""
    )
    await admin.data(
        'mutation { createModel(slug: "far-model", input: {name: "Far Model"}) { slug } }'
    )
    return "far-bench"


async def test_a_write_elsewhere_keeps_the_answers_that_did_not_read_it(
    client: httpx.AsyncClient, calls: Counter[str], admin: GraphQLClient, elsewhere: str
) -> None:
    await warm(client, calls, PAGE_OF_GENERAL, CATALOG)
    await admin.data(UPDATE, slug=elsewhere, input={"note": "Re-read in December."})
    await admin.data(
        RECORD_READ, slug=elsewhere, input={"readOn": "2026-11-20", "entries": TWO_ROWS}
    )
    await admin.data(UPDATE_MODEL, slug="far-model", input={"releasedOn": "2026-10"})
    for query in (PAGE_OF_GENERAL, CATALOG):
        assert not await executes(client, calls, query)

    # A benchmark past a catalog page is elsewhere too, for that page.
    await admin.data(UPDATE, slug="deepsearchqa", input={"note": "Seen again."})
    assert not await executes(client, calls, CATALOG)
    assert await executes(client, calls, PAGE_OF_GENERAL)  # it shows every sibling


SHOWS_TWO = "siblings(first: 2) { totalCount nodes { slug } }"


@pytest.mark.parametrize(
    ("query", "variables", "key", "exact"),
    [
        (
            "query($first: Int!) { benchmark(slug: %s) { name "
            "siblings(first: $first) { totalCount nodes { slug } } } }",
            {"first": 2},
            "benchmark",
            True,
        ),
        ("{ page: benchmark(slug: %s) { name " + SHOWS_TWO + " } }", {}, "page", True),
        (
            "{ benchmark(slug: %s) { ... on Benchmark { " + SHOWS_TWO + " } } }",
            {},
            "benchmark",
            True,
        ),
        # Behind a named fragment the page reads its first 20, and depends on them all.
        (
            "{ benchmark(slug: %s) { ...Around } } fragment Around on Benchmark { "
            + SHOWS_TWO
            + " }",
            {},
            "benchmark",
            False,
        ),
    ],
)
async def test_a_page_depends_on_the_siblings_it_shows_not_on_those_past_them(
    client: httpx.AsyncClient,
    calls: Counter[str],
    admin: GraphQLClient,
    query: str,
    variables: dict[str, Any],
    key: str,
    exact: bool,
) -> None:
    every = (await client.post("/graphql", json={"query": PAGE_OF_GENERAL})).json()
    slugs = [node["slug"] for node in every["data"]["benchmark"]["siblings"]["nodes"]]
    assert len(slugs) > 3
    body = {"query": query % json.dumps(GENERAL), "variables": variables}

    async def runs() -> bool:
        before = sum(calls.values())
        answer = (await client.post("/graphql", json=body)).json()
        assert answer["data"][key]["siblings"]["nodes"] == [{"slug": s} for s in slugs[:2]]
        return sum(calls.values()) > before

    assert await runs()
    assert not await runs()
    # A sibling past the two shown changed: neither the slice nor its order moved.
    await admin.data(UPDATE, slug=slugs[-1], input={"note": "Checked again."})
    assert await runs() is not exact
    await admin.data(UPDATE, slug=slugs[1], input={"note": "Checked again."})
    assert await runs()
    assert not await runs()


async def test_a_page_without_siblings_depends_on_none(
    client: httpx.AsyncClient, calls: Counter[str], admin: GraphQLClient
) -> None:
    name_only = NAME_ONLY % json.dumps(GENERAL)
    await warm(client, calls, name_only)
    every = (await client.post("/graphql", json={"query": PAGE_OF_GENERAL})).json()
    first_sibling = every["data"]["benchmark"]["siblings"]["nodes"][0]["slug"]
    await admin.data(UPDATE, slug=first_sibling, input={"note": "Checked again."})
    assert not await executes(client, calls, name_only)


RECORD_READ = """mutation($slug: String!, $input: LeaderboardReadInput!) {
  recordLeaderboardRead(benchmark: $slug, input: $input) { recorded } }"""
TWO_ROWS = [
    {"modelName": "Qwen-14B-Chat", "score": 60.0, "setting": "v1", "publishedOn": "2026-11-01"},
    {"modelName": "Unknown-7B", "score": 50.0, "setting": "v1", "publishedOn": "2026-11-01"},
]


@pytest.mark.parametrize(
    ("write", "slug", "changed"),
    [
        ("the benchmark", GENERAL, {"note": "Checked again."}),
        ("a family member", "code-interpreter-benchmark-math", {"note": "Checked again."}),
        ("the parent", "code-interpreter-benchmark", {"description": "The whole suite."}),
        ("a sibling shown", "mcp-atlas", {"note": "Checked again."}),
        ("a sibling leaving the category", "bfcl-v4", {"category": "elsewhere"}),
    ],
)
async def test_a_write_to_what_the_page_read_retires_it(
    client: httpx.AsyncClient,
    calls: Counter[str],
    admin: GraphQLClient,
    elsewhere: str,
    write: str,
    slug: str,
    changed: dict[str, Any],
) -> None:
    await warm(client, calls, PAGE_OF_GENERAL)
    await admin.data(UPDATE, slug=slug, input=changed)
    assert await executes(client, calls, PAGE_OF_GENERAL), write
    assert not await executes(client, calls, PAGE_OF_GENERAL)  # kept again, once


async def test_a_tracked_model_shown_retires_the_answers_that_read_it(
    client: httpx.AsyncClient, calls: Counter[str], admin: GraphQLClient, elsewhere: str
) -> None:
    await warm(client, calls, PAGE_OF_GENERAL, CATALOG)
    await admin.data(UPDATE_MODEL, slug="qwen-14b", input={"capabilityIndexRank": 99})
    assert await executes(client, calls, PAGE_OF_GENERAL)
    # The catalog's first two leaders are not that model: it keeps its answer.
    assert not await executes(client, calls, CATALOG)


async def test_a_catalog_page_is_retired_by_its_rows_and_by_the_catalog(
    client: httpx.AsyncClient, calls: Counter[str], admin: GraphQLClient, elsewhere: str
) -> None:
    shown = (await client.post("/graphql", json={"query": CATALOG})).json()
    first = shown["data"]["benchmarks"]["nodes"][0]["slug"]
    await warm(client, calls, CATALOG)
    await admin.data(UPDATE, slug=first, input={"note": "Checked again."})
    assert await executes(client, calls, CATALOG)
    await warm(client, calls, CATALOG)
    await admin.data(
        """mutation { createBenchmark(slug: "near-bench", input: {name: "Near Bench",
             metric: {name: "Accuracy", unit: PERCENT}, category: "elsewhere"}) { slug } }"""
    )
    assert await executes(client, calls, CATALOG)  # one more benchmark: its total moved


async def test_a_write_by_another_process_is_seen_by_the_next_request(
    client: httpx.AsyncClient, store: Store
) -> None:
    note = '{ benchmark(slug: "code-interpreter-benchmark-general") { note } }'
    # Followed from now, before the first answer is kept (the fixture's store reuses answers at
    # once, `version.known`): a follower starting after the other's write takes it as applied.
    store.follower.start((await store.change_bounds())[1])  # type: ignore[attr-defined]
    following = asyncio.create_task(store.follow_changes())
    other = another_process(store)
    try:
        before = (await client.post("/graphql", json={"query": note})).json()["data"]
        await changed(other, GENERAL, note="Seen by another process.")

        async def seen() -> bool:
            answer = (await client.post("/graphql", json={"query": note})).json()["data"]
            return bool(answer["benchmark"]["note"] == "Seen by another process.")

        deadline = asyncio.get_running_loop().time() + 20  # generous: a loaded machine
        while not await seen():
            assert asyncio.get_running_loop().time() < deadline, "not seen in time"
            await asyncio.sleep(0.05)
        assert before["benchmark"]["note"] != "Seen by another process."
    finally:
        following.cancel()
        await asyncio.gather(following, return_exceptions=True)
        if isinstance(other, SqliteStore):
            await other.close()


async def test_with_no_memory_for_answers_each_query_runs(
    store: Store, calls: Counter[str]
) -> None:
    app = create_app(Settings(response_cache_bytes=0), store)
    async with http_client(app) as http:
        for _ in range(2):
            answer = await http.get("/graphql", params=COVERAGE)
            assert answer.json() == {
                "data": {"modelCardCoverage": {"launchPostsRead": 522}},
                "extensions": answer.json()["extensions"],
            }
            assert answer.headers["cache-control"].startswith("public")
    assert calls["site_figures"] == 2


async def test_a_kept_answer_is_logged_under_its_operations_name(
    store: Store, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    app = create_app(Settings(), store)
    named = {"query": "query Coverage { modelCardCoverage { labsRead } }"}
    async with http_client(app) as http:
        await http.post("/graphql", json=named)
        written(app, capsysbinary)
        await http.post("/graphql", json=named)  # kept: the request names no operation
        [line] = written(app, capsysbinary)
    assert " operation=Coverage " in line
