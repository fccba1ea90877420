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
from store.queries import Store
from store.seed import load_bundled_dataset
from tests.http.test_contract import CONTRACT, GENERAL

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
