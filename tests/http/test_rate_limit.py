"""`rateLimit`: the request's cost and the budget left, and with `dryRun` a price without a run."""

from collections import Counter

import httpx

QUERY = "{ rateLimit { cost limit remaining restoreRate resetAt } benchmarks(first: 10) { nodes { slug } } }"
DRY = "query($dry: Boolean!) { rateLimit(dryRun: $dry) { cost remaining } benchmarks(first: 10) { nodes { slug } } }"


async def test_it_reports_the_cost_charged_and_the_budget_left(client: httpx.AsyncClient) -> None:
    response = await client.post("/graphql", json={"query": QUERY})
    body = response.json()
    rate_limit, cost = body["data"]["rateLimit"], body["extensions"]["cost"]
    assert rate_limit["cost"] == cost["requestedQueryCost"] == 1 + 1 + 10
    assert rate_limit["remaining"] == int(response.headers["ratelimit-remaining"])
    assert rate_limit["limit"] == cost["throttleStatus"]["maximumAvailable"]
    assert rate_limit["restoreRate"] == cost["throttleStatus"]["restoreRate"]
    assert rate_limit["resetAt"].endswith("Z")
    # Never an answer reused from another request: the budget moves on.
    again = (await client.post("/graphql", json={"query": QUERY})).json()
    assert again["data"]["rateLimit"]["remaining"] < rate_limit["remaining"]


async def test_a_dry_run_prices_the_request_and_runs_none_of_it(
    client: httpx.AsyncClient, calls: Counter[str]
) -> None:
    dry = await client.post("/graphql", json={"query": DRY, "variables": {"dry": True}})
    body = dry.json()
    assert body["data"] == {
        "rateLimit": {"cost": 12, "remaining": body["data"]["rateLimit"]["remaining"]}
    }
    assert calls == {}  # nothing of the request ran
    assert body["extensions"]["cost"]["requestedQueryCost"] == 1  # the least any request is charged
    real = (await client.post("/graphql", json={"query": DRY, "variables": {"dry": False}})).json()
    assert (
        real["data"]["rateLimit"]["cost"] == 12 == real["extensions"]["cost"]["requestedQueryCost"]
    )
    assert len(real["data"]["benchmarks"]["nodes"]) == 10
