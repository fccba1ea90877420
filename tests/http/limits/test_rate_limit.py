"""`rateLimit`: the request's cost and the budget left, and with `dryRun` a price without a run."""

from collections import Counter

import httpx
import pytest

from server.settings import Settings

CAPACITY = 5_000


@pytest.fixture
def settings() -> Settings:
    """A budget that refills by a thousandth of a point a second: what a test reads of it is
    what its own requests spent, however slowly they run."""
    return Settings(anonymous_bucket_capacity=CAPACITY, anonymous_restore_rate=0.001)


QUERY = "{ rateLimit { cost limit remaining restoreRate resetAt } benchmarks(first: 10) { nodes { slug } } }"
DRY = "query($dry: Boolean!) { rateLimit(dryRun: $dry) { cost remaining } benchmarks(first: 10) { nodes { slug } } }"


async def test_it_reports_the_cost_charged_and_the_budget_left(client: httpx.AsyncClient) -> None:
    response = await client.post("/graphql", json={"query": QUERY})
    body = response.json()
    rate_limit, cost = body["data"]["rateLimit"], body["extensions"]["cost"]
    assert rate_limit["cost"] == cost["requestedQueryCost"] == 1 + 1 + 10
    assert rate_limit["remaining"] == CAPACITY - 12
    assert rate_limit["remaining"] == int(response.headers["ratelimit-remaining"])
    assert rate_limit["limit"] == cost["throttleStatus"]["maximumAvailable"] == CAPACITY
    assert rate_limit["restoreRate"] == cost["throttleStatus"]["restoreRate"] == 0.001
    assert rate_limit["resetAt"].endswith("Z")
    # Never an answer reused from another request: the budget moves on, by what it charged.
    second = await client.post("/graphql", json={"query": QUERY})
    again = second.json()
    charged = again["extensions"]["cost"]["requestedQueryCost"]
    assert again["data"]["rateLimit"]["cost"] == charged == 12
    assert again["data"]["rateLimit"]["remaining"] == CAPACITY - 12 - charged
    assert again["data"]["rateLimit"]["remaining"] == int(second.headers["ratelimit-remaining"])


async def test_a_dry_run_prices_the_request_and_runs_none_of_it(
    client: httpx.AsyncClient, calls: Counter[str]
) -> None:
    dry = await client.post("/graphql", json={"query": DRY, "variables": {"dry": True}})
    body = dry.json()
    assert calls == {}  # nothing of the request ran
    assert body["extensions"]["cost"]["requestedQueryCost"] == 1  # the least any request is charged
    # The price of a run, and the budget left after the dry run's own charge.
    assert body["data"] == {"rateLimit": {"cost": 12, "remaining": CAPACITY - 1}}
    real = (await client.post("/graphql", json={"query": DRY, "variables": {"dry": False}})).json()
    assert (
        real["data"]["rateLimit"]["cost"] == 12 == real["extensions"]["cost"]["requestedQueryCost"]
    )
    assert real["data"]["rateLimit"]["remaining"] == CAPACITY - 1 - 12
    assert len(real["data"]["benchmarks"]["nodes"]) == 10


async def test_a_fragment_costs_what_each_place_it_is_spread_returns(
    client: httpx.AsyncClient,
) -> None:
    """Spread under `first: 1` and under `first: 100`, a fragment costs 1 and 100 items."""
    spread = """{ small: benchmarks(first: 1) { ...Page } large: benchmarks(first: 100) { ...Page } }
        fragment Page on BenchmarkConnection { nodes { slug } }"""
    inline = """{ small: benchmarks(first: 1) { nodes { slug } }
        large: benchmarks(first: 100) { nodes { slug } } }"""
    costs = []
    for text in (spread, inline):
        body = (await client.post("/graphql", json={"query": text})).json()
        assert "errors" not in body, body
        costs.append(body["extensions"]["cost"]["requestedQueryCost"])
    assert costs == [(1 + 1) + (1 + 100)] * 2
