"""`/metrics`: counters that move with known requests, in Prometheus' text format."""

import hashlib
import time
from typing import Any

import httpx
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families

from server.api_keys import create_key
from server.app import create_app
from server.settings import Settings
from store import Store
from tests.conftest import http_client
from tests.http.reads.test_contract import CONTRACT, GENERAL


async def scrape(client: httpx.AsyncClient) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = await client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def value(samples: dict[Any, float], name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


async def test_counters_move_with_known_requests(client: httpx.AsyncClient) -> None:
    before = await scrape(client)
    page = {"query": CONTRACT.read_text(encoding="utf-8"), "variables": {"slug": GENERAL}}
    first = (await client.post("/graphql", json=page)).json()
    await client.post("/graphql", json=page)  # its answer kept: a hit
    await client.post(
        "/graphql", json={"query": "query Mine { categories { slug } }", "operationName": "Mine"}
    )
    await client.post("/graphql", json={"query": "{ nope }"})
    after = await scrape(client)

    def moved(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    ok = {"operation": "BenchmarkPage", "code": "none", "status": "200"}
    assert moved("almanac_request_seconds_count", **ok) == 2
    # An operation that is not one of the site's documents is "other": labels stay few.
    other = {"operation": "other", "code": "none", "status": "200"}
    assert moved("almanac_request_seconds_count", **other) == 1
    invalid = {"operation": "anonymous", "code": "GRAPHQL_VALIDATION_FAILED", "status": "200"}
    assert moved("almanac_request_seconds_count", **invalid) == 1
    page_cost = first["extensions"]["cost"]["requestedQueryCost"]
    assert moved("almanac_query_cost_points_total") >= 2 * page_cost
    assert moved("almanac_kept_answers_total", result="hit") >= 1
    assert moved("almanac_kept_answers_total", result="miss") >= 1
    assert moved("almanac_store_seconds_count", method="benchmark_with_neighbourhood") >= 1
    assert value(after, "almanac_kept_answer_bytes") > 0
    assert value(after, "almanac_data_version_age_seconds") >= 0


async def test_throttles_and_persisted_queries_are_counted(store: Store) -> None:
    app = create_app(
        Settings(max_query_cost=20, anonymous_bucket_capacity=20, anonymous_restore_rate=0.001),
        store,
    )
    text = "{ modelCardCoverage { labsRead } }"
    persisted = {
        "persistedQuery": {"version": 1, "sha256Hash": hashlib.sha256(text.encode()).hexdigest()}
    }
    async with http_client(app) as http:
        before = await scrape(http)
        await http.post("/graphql", json={"extensions": persisted})  # miss
        await http.post("/graphql", json={"query": text, "extensions": persisted})  # registered
        await http.post("/graphql", json={"extensions": persisted})  # hit
        for _ in range(25):
            await http.post(
                "/graphql", json={"query": "{ benchmarks(first: 5) { nodes { slug } } }"}
            )
        after = await scrape(http)
    await app.services.shared.budgets.close()
    for result in ("miss", "registered", "hit"):
        assert (
            value(after, "almanac_persisted_queries_total", result=result)
            - value(before, "almanac_persisted_queries_total", result=result)
            == 1
        ), result
    assert value(after, "almanac_throttled_requests_total") > value(
        before, "almanac_throttled_requests_total"
    )


async def test_metrics_can_be_turned_off(store: Store) -> None:
    """No /metrics, and nothing measured: no request counted, no store call timed (read from
    the process's registry itself, as /metrics is gone)."""
    watched = [
        (
            "almanac_request_seconds_count",
            {"operation": "BenchmarkPage", "code": "none", "status": "200"},
        ),
        ("almanac_store_seconds_count", {"method": "benchmark_with_neighbourhood"}),
    ]

    def measured() -> list[float | None]:
        return [REGISTRY.get_sample_value(name, labels) for name, labels in watched]

    app = create_app(Settings(metrics=False), store)
    before = measured()
    # With its life (as served): what it measures would be folded in, at the latest as it ends.
    async with app.router.lifespan_context(app), http_client(app) as http:
        assert (await http.get("/metrics")).status_code == 404
        page = {"query": CONTRACT.read_text(encoding="utf-8"), "variables": {"slug": GENERAL}}
        answered = (await http.post("/graphql", json=page)).json()
        assert answered["data"]["benchmark"]["slug"] == GENERAL
    assert measured() == before
    await app.services.shared.budgets.close()


async def test_a_change_of_the_data_is_dated(client: httpx.AsyncClient, store: Store) -> None:
    key = await create_key(store, "editor", "admin")
    before = await scrape(client)
    assert value(before, "almanac_data_version_known") == 1
    began = time.time()
    created = await client.post(
        "/graphql",
        json={"query": 'mutation { createLab(input: {slug: "acme", name: "Acme"}) { slug } }'},
        headers={"Authorization": f"Bearer {key}"},
    )
    assert created.json()["data"] == {"createLab": {"slug": "acme"}}
    after = await scrape(client)
    assert value(after, "almanac_data_changed_timestamp_seconds") >= began
    assert value(after, "almanac_data_version_age_seconds") < time.time() - began + 0.1
