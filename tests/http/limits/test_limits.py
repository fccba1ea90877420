"""Abuse is refused before any work, and budgets meter every client (docs/partners.md)."""

import asyncio
import logging
from collections import Counter
from typing import Any

import httpx
import pytest

from request_limits.budgets import BucketPolicy
from server.api_keys import create_key, set_budget
from server.app import AlmanacApp, create_app
from server.settings import Settings
from store import Store
from tests.conftest import free_port, http_client, redis_server

FIFTY_POINTS = "{ benchmarks(first: 49) { nodes { slug } } }"  # 1 + 49


@pytest.fixture
def settings(budgets_in: dict[str, Any]) -> Settings:
    return Settings(
        max_query_cost=400,
        max_depth=8,
        max_aliases=5,
        max_tokens=300,
        max_batch=3,
        max_body_bytes=20_000,
        anonymous_bucket_capacity=400,
        anonymous_restore_rate=0.001,  # Refills only as the tests move on: none in a test.
        key_bucket_capacity=1_000,
        key_restore_rate=0.001,
        **budgets_in,
    )


def codes(body: Any) -> list[str]:
    return [error["extensions"]["code"] for error in body["errors"]]


DEEP = '{ benchmark(slug: "x") { parent { parent { parent { parent { parent { parent { parent { parent { name } } } } } } } } } }'
ALIAS_BOMB = "{ " + " ".join(f"a{i}: modelCardCoverage {{ labsRead }}" for i in range(20)) + " }"
CYCLE = '{ benchmark(slug: "x") { ...A } } fragment A on Benchmark { parent { ...A } }'
HUGE_PAGE = "{ benchmarks(first: 100000) { nodes { name } } }"
TOKENS = "{ categories { " + "slug " * 400 + "} }"
EXPENSIVE = "{ benchmarks(first: 10) { nodes { leaderboard { model { name } } } } }"
LAST_PAST_A_PAGE = "{ changes(last: 101) { nodes { sequence } } }"
INTROSPECTION = "{ __schema { types { fields { type { name } } } } }"


@pytest.mark.parametrize(
    ("query", "code", "message_part"),
    [
        (DEEP, "MAX_DEPTH_EXCEEDED", "10 deep; the most allowed is 8"),
        (ALIAS_BOMB, "TOO_MANY_ALIASES", "20 aliases; the most allowed is 5"),
        (CYCLE, "FRAGMENT_CYCLE", "A"),
        (HUGE_PAGE, "BAD_USER_INPUT", "`first` must be between 0 and 100; got 100000."),
        (EXPENSIVE, "MAX_COST_EXCEEDED", "costs 2011 points; the most a request may cost is 400"),
        (TOKENS, "TOO_MANY_TOKENS", "more than 300 tokens"),
        (LAST_PAST_A_PAGE, "BAD_USER_INPUT", "`last` must be between 0 and 100; got 101."),
        (INTROSPECTION, "MAX_COST_EXCEEDED", "the most a request may cost is 400"),
    ],
)
async def test_abuse_is_refused_before_any_work(
    client: httpx.AsyncClient, calls: Counter[str], query: str, code: str, message_part: str
) -> None:
    response = await client.post("/graphql", json={"query": query})
    assert response.status_code == 200
    body = response.json()
    assert codes(body) == [code]
    assert message_part in body["errors"][0]["message"]
    assert "data" not in body
    assert calls == {}
    assert body["extensions"]["cost"]["requestedQueryCost"] == 1  # a refusal's flat charge
    # The new media type says the same with a 400, as GraphQL over HTTP asks.
    strict = await client.post(
        "/graphql",
        json={"query": query},
        headers={"accept": "application/graphql-response+json"},
    )
    assert strict.status_code == 400
    assert codes(strict.json()) == [code]


async def test_cost_refusal_states_cost_and_maximum(client: httpx.AsyncClient) -> None:
    body = (await client.post("/graphql", json={"query": EXPENSIVE})).json()
    assert body["errors"][0]["extensions"] == {
        "code": "MAX_COST_EXCEEDED",
        "cost": 2011,
        "maximumCost": 400,
    }
    assert body["errors"][0]["message"] == (
        "The query costs 2011 points; the most a request may cost is 400. "
        "Ask for fewer items (`first`) or fewer fields."
    )
    assert body["extensions"]["cost"]["maximumQueryCost"] == 400


async def test_huge_batch_is_refused_whole(client: httpx.AsyncClient, calls: Counter[str]) -> None:
    batch = [{"query": FIFTY_POINTS}] * 4
    response = await client.post("/graphql", json=batch)
    assert response.status_code == 400
    assert codes(response.json()) == ["BATCH_TOO_LARGE"]
    assert "4 operations; the most allowed is 3" in response.json()["errors"][0]["message"]
    assert calls == {}


async def test_batch_runs_each_operation_and_charges_the_total(
    client: httpx.AsyncClient,
) -> None:
    batch = [
        {"query": FIFTY_POINTS},
        {"query": "{ modelCardCoverage { labsRead } }"},
        {"query": "{ nope }"},
    ]
    response = await client.post("/graphql", json=batch)
    assert response.status_code == 200
    categories, coverage, invalid = response.json()
    assert len(categories["data"]["benchmarks"]["nodes"]) == 11
    assert coverage["data"] == {"modelCardCoverage": {"labsRead": 52}}
    assert codes(invalid) == ["GRAPHQL_VALIDATION_FAILED"]
    assert [item["extensions"]["cost"]["requestedQueryCost"] for item in batch_items(response)] == [
        50,
        1,
        1,
    ]
    assert coverage["extensions"]["cost"]["throttleStatus"]["currentlyAvailable"] == 400 - 52


def batch_items(response: httpx.Response) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = response.json()
    return items


async def test_batch_over_the_maximum_cost_together(
    client: httpx.AsyncClient, calls: Counter[str]
) -> None:
    page = {"query": "{ benchmarks(first: 100) { nodes { name metric { name } } } }"}  # 201
    response = await client.post("/graphql", json=[page, page])
    assert response.status_code == 400
    assert codes(response.json()) == ["MAX_COST_EXCEEDED"]
    assert "402 points together" in response.json()["errors"][0]["message"]
    assert calls == {}


async def test_oversized_body_is_refused(client: httpx.AsyncClient, calls: Counter[str]) -> None:
    response = await client.post("/graphql", json={"query": FIFTY_POINTS + " " * 30_000})
    assert response.status_code == 413
    assert codes(response.json()) == ["PAYLOAD_TOO_LARGE"]
    assert calls == {}


async def test_anonymous_budget_drains_per_address(app: AlmanacApp) -> None:
    async with http_client(app, "10.0.0.1") as first, http_client(app, "10.0.0.2") as second:
        for spent in range(50, 401, 50):
            response = await first.post("/graphql", json={"query": FIFTY_POINTS})
            assert response.status_code == 200
            assert response.headers["RateLimit-Remaining"] == str(400 - spent)
            assert response.json()["extensions"]["cost"]["throttleStatus"] == {
                "maximumAvailable": 400,
                "currentlyAvailable": 400 - spent,
                "restoreRate": 0.001,
            }
        throttled = await first.post("/graphql", json={"query": FIFTY_POINTS})
        assert throttled.status_code == 429
        assert codes(throttled.json()) == ["THROTTLED"]
        assert int(throttled.headers["Retry-After"]) == 50_000  # 50 points at 0.001 a second
        assert "costs 50 points and 0 are left" in throttled.json()["errors"][0]["message"]
        assert "data" not in throttled.json()
        assert throttled.json()["extensions"]["cost"]["requestedQueryCost"] == 0  # not charged
        assert int(throttled.headers["RateLimit-Reset"]) > 0
        # Another address has its own bucket.
        assert (await second.post("/graphql", json={"query": FIFTY_POINTS})).status_code == 200
        # No request is free: even the cheapest is throttled now, and says where it stands.
        cheapest = await first.post("/graphql", json={"query": "{ __typename }"})
        assert cheapest.status_code == 429
        assert cheapest.headers["RateLimit-Remaining"] == "0"
        assert cheapest.headers["Retry-After"] == "1000"  # 1 point at 0.001 a second
        assert cheapest.json()["extensions"]["cost"]["requestedQueryCost"] == 0


async def test_each_key_has_its_own_bigger_budget(app: AlmanacApp, store: Store) -> None:
    keys = [await create_key(store, name, "read") for name in ("partner-a", "partner-b")]
    async with http_client(app) as http:
        for _ in range(20):  # 1000 points
            response = await http.post(
                "/graphql",
                json={"query": FIFTY_POINTS},
                headers={"Authorization": f"Bearer {keys[0]}"},
            )
            assert response.status_code == 200
        assert response.headers["RateLimit-Limit"] == "1000"
        over = await http.post(
            "/graphql", json={"query": FIFTY_POINTS}, headers={"Authorization": f"Bearer {keys[0]}"}
        )
        assert over.status_code == 429
        other = await http.post(
            "/graphql", json={"query": FIFTY_POINTS}, headers={"Authorization": f"Bearer {keys[1]}"}
        )
        assert other.status_code == 200
        assert other.headers["RateLimit-Remaining"] == "950"
        # The anonymous bucket of the same address was never touched.
        anonymous = await http.post("/graphql", json={"query": FIFTY_POINTS})
        assert anonymous.headers["RateLimit-Remaining"] == "350"


async def test_a_key_can_have_its_own_budget(app: AlmanacApp, store: Store) -> None:
    # A slow restore: what is left after 40 requests does not depend on how fast they ran.
    site = BucketPolicy(capacity=2_000, restore_rate=0.01)
    key = await create_key(store, "site", "read", site)
    small = await create_key(store, "tiny", "read", BucketPolicy(capacity=50, restore_rate=1))
    async with http_client(app) as http:

        async def ask(with_key: str) -> httpx.Response:
            headers = {"Authorization": f"Bearer {with_key}"}
            return await http.post("/graphql", json={"query": FIFTY_POINTS}, headers=headers)

        for _ in range(40):  # 2000 points: twice the configured key budget
            response = await ask(key)
            assert response.status_code == 200
        assert response.headers["RateLimit-Limit"] == "2000"
        assert response.json()["extensions"]["cost"]["throttleStatus"] == {
            "maximumAvailable": 2_000,
            "currentlyAvailable": 0,
            "restoreRate": 0.01,
        }
        assert (await ask(key)).status_code == 429
        # Back on the configured budget from its next request; what it spent stays spent.
        assert await set_budget(store, "site", None)
        back = await ask(key)
        assert back.status_code == 429
        assert back.headers["RateLimit-Limit"] == "1000"
        # A budget below the most a request may cost (400 here) is raised to it.
        assert (await ask(small)).headers["RateLimit-Limit"] == "400"


async def test_anonymous_access_can_be_switched_off(store: Store) -> None:
    app = create_app(Settings(anonymous_access=False), store)
    key = await create_key(store, "partner", "read")
    async with http_client(app) as http:
        refused = await http.post("/graphql", json={"query": FIFTY_POINTS})
        assert refused.status_code == 401
        assert codes(refused.json()) == ["UNAUTHENTICATED"]
        assert refused.headers["WWW-Authenticate"].startswith("Bearer")
        keyed = await http.post(
            "/graphql", json={"query": FIFTY_POINTS}, headers={"Authorization": f"Bearer {key}"}
        )
        assert keyed.status_code == 200


async def test_slow_request_is_stopped_with_timeout(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def stuck() -> None:
        await asyncio.sleep(60)

    monkeypatch.setattr(store, "site_figures", stuck)
    app = create_app(Settings(request_timeout_seconds=0.2), store)
    async with http_client(app) as http:
        response = await http.post("/graphql", json={"query": "{ modelCardCoverage { labsRead } }"})
    assert response.status_code == 504
    body = response.json()
    assert codes(body) == ["TIMEOUT"]
    assert "longer than 0.2 seconds" in body["errors"][0]["message"]


class Clock:
    """The budgets' clock, moved on by the test alone."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


async def test_budget_refills_with_time(store: Store, budgets_in: dict[str, Any]) -> None:
    settings = Settings(
        max_query_cost=100, anonymous_bucket_capacity=100, anonymous_restore_rate=200, **budgets_in
    )
    app = create_app(settings, store)
    budgets: Any = app.services.shared.budgets  # its clock, the test's
    clock = budgets.clock = Clock(budgets.clock())
    async with http_client(app) as http:
        for _ in range(2):
            assert (await http.post("/graphql", json={"query": FIFTY_POINTS})).status_code == 200
        drained = await http.post("/graphql", json={"query": FIFTY_POINTS})
        assert drained.status_code == 429
        assert drained.headers["Retry-After"] == "1"
        clock.now += 0.25  # 50 points flow back at 200 a second
        refilled = await http.post("/graphql", json={"query": FIFTY_POINTS})
        assert refilled.status_code == 200
        assert refilled.headers["RateLimit-Remaining"] == "0"
        clock.now += 0.5
        full = await http.post("/graphql", json={"query": FIFTY_POINTS})
        assert full.headers["RateLimit-Remaining"] == "50"
    await app.services.shared.budgets.close()


async def test_two_processes_share_one_budget_in_redis(store: Store, redis_url: str) -> None:
    settings = Settings(
        max_query_cost=100,
        anonymous_bucket_capacity=100,
        anonymous_restore_rate=0.001,
        redis_url=redis_url,
        redis_key_prefix="almanac-test-shared:",
    )
    one, two = create_app(settings, store), create_app(settings, store)
    shared: Any = one.services.shared.budgets  # RedisBudgets
    await shared.redis.flushdb()
    async with http_client(one, "10.9.9.9") as first, http_client(two, "10.9.9.9") as second:
        assert (await first.post("/graphql", json={"query": FIFTY_POINTS})).status_code == 200
        spent_elsewhere = await second.post("/graphql", json={"query": FIFTY_POINTS})
        assert spent_elsewhere.headers["RateLimit-Remaining"] == "0"
        assert (await first.post("/graphql", json={"query": FIFTY_POINTS})).status_code == 429
    for app in (one, two):
        await app.services.shared.budgets.close()


async def test_refusals_are_charged_so_no_address_sends_them_without_end(
    app: AlmanacApp, calls: Counter[str]
) -> None:
    async with http_client(app, "10.0.0.7") as http:
        for sent in range(1, 401):
            malformed = await http.post(
                "/graphql", content=b'{"query": ', headers={"content-type": "application/json"}
            )
            assert malformed.status_code == 400
            assert malformed.headers["RateLimit-Remaining"] == str(400 - sent)
            assert malformed.json()["extensions"]["cost"]["requestedQueryCost"] == 1
        throttled = await http.post("/graphql", json={"query": "{ nosuchfield }"})
        assert throttled.status_code == 429
        assert codes(throttled.json()) == ["THROTTLED"]
        again = await http.post(
            "/graphql", content=b"[]", headers={"content-type": "application/json"}
        )
        assert again.status_code == 429
    assert calls == {}


def log_lines(caplog: pytest.LogCaptureFixture, text: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if text in r.getMessage()]


async def gauge(http: httpx.AsyncClient, name: str) -> float:
    metrics = (await http.get("/metrics")).text
    [line] = [line for line in metrics.splitlines() if line.startswith(f"{name} ")]
    return float(line.split()[1])


async def test_a_redis_outage_is_two_warnings_and_hands_out_no_spent_budget(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    port = free_port()
    settings = Settings(
        max_query_cost=100,
        anonymous_bucket_capacity=100,
        anonymous_restore_rate=0.001,
        redis_url=f"redis://127.0.0.1:{port}/0",
    )
    app = create_app(settings, store)
    async with http_client(app, "10.8.8.8") as http, http_client(app, "10.8.8.9") as other:
        with redis_server(port):
            for _ in range(2):
                spent = await http.post("/graphql", json={"query": FIFTY_POINTS})
                assert spent.status_code == 200
            assert spent.headers["RateLimit-Remaining"] == "0"
            assert await gauge(http, "almanac_shared_budgets_reachable") == 1
        failures = await gauge(http, "almanac_budget_backend_failures_total")

        # Redis is down: the throttled client stays throttled, and it is said once.
        with caplog.at_level(logging.WARNING, logger="almanac.limits"):
            for _ in range(5):
                during = await http.post("/graphql", json={"query": FIFTY_POINTS})
                assert during.status_code == 429
                assert during.headers["RateLimit-Remaining"] == "0"
            fresh = await other.post("/graphql", json={"query": FIFTY_POINTS})
            assert fresh.status_code == 200  # a client this process never charged: a full budget
            assert await gauge(http, "almanac_shared_budgets_reachable") == 0
            assert await gauge(http, "almanac_budget_backend_failures_total") == failures + 6
            assert len(log_lines(caplog, "Redis failed")) == 1

            with redis_server(port):
                deadline = asyncio.get_running_loop().time() + 30
                while not log_lines(caplog, "Redis is back"):
                    assert asyncio.get_running_loop().time() < deadline, "never back"
                    await other.post("/graphql", json={"query": "{ __typename }"})
                    await asyncio.sleep(0.05)
                for _ in range(3):
                    back = await other.post("/graphql", json={"query": "{ __typename }"})
                    assert back.status_code == 200
                assert await gauge(http, "almanac_shared_budgets_reachable") == 1
        assert len(log_lines(caplog, "Redis failed")) == 1
        assert len(log_lines(caplog, "Redis is back")) == 1
    await app.services.shared.budgets.close()


AT_THE_MAXIMUM = (
    "{ a: benchmarks(first: 100) { nodes { slug } } b: benchmarks(first: 100) { nodes { slug } }"
    " c: benchmarks(first: 100) { nodes { slug } } d: benchmarks(first: 96) { nodes { slug } } }"
)  # 3 * 101 + 97: exactly the 400 points a request may cost


async def test_a_request_costing_exactly_the_maximum_runs(app: AlmanacApp) -> None:
    async with http_client(app, "10.0.0.1") as first, http_client(app, "10.0.0.2") as second:
        body = (await first.post("/graphql", json={"query": AT_THE_MAXIMUM})).json()
        assert "errors" not in body, body
        assert body["extensions"]["cost"]["requestedQueryCost"] == 400
        over = AT_THE_MAXIMUM.replace("first: 96", "first: 97")
        body = (await second.post("/graphql", json={"query": over})).json()
        assert codes(body) == ["MAX_COST_EXCEEDED"]
        assert body["errors"][0]["extensions"]["cost"] == 401


async def test_a_batch_costing_exactly_the_maximum_runs(client: httpx.AsyncClient) -> None:
    page = "{ benchmarks(first: 100) { nodes { slug } } }"
    last = "{ x: benchmarks(first: 100) { nodes { slug } } y: benchmarks(first: 96) { nodes { slug } } }"
    response = await client.post(
        "/graphql", json=[{"query": page}, {"query": page}, {"query": last}]
    )
    costs = [item["extensions"]["cost"]["requestedQueryCost"] for item in response.json()]
    assert costs == [101, 101, 198]
    assert all("errors" not in item for item in response.json())


async def test_the_operation_named_is_the_one_priced(client: httpx.AsyncClient) -> None:
    text = "query A { categories { slug } } query B { benchmarks(first: 2) { nodes { slug } } }"
    body = (await client.post("/graphql", json={"query": text, "operationName": "B"})).json()
    assert body["extensions"]["cost"]["requestedQueryCost"] == 1 + 2


async def test_a_variable_execution_refuses_costs_the_minimum_and_is_shown_as_sent(
    client: httpx.AsyncClient, calls: Counter[str]
) -> None:
    text = "query($n: Int!) { benchmarks(first: $n) { nodes { slug } } }"
    body = (
        await client.post("/graphql", json={"query": text, "variables": {"n": {"a": None}}})
    ).json()
    assert body["extensions"]["cost"]["requestedQueryCost"] == 1
    assert '{"a":null}' in body["errors"][0]["message"]  # JSON, as sent
    assert calls == {}


async def test_a_batch_the_budget_cannot_take_is_refused_whole_and_charged_nothing(
    app: AlmanacApp, calls: Counter[str]
) -> None:
    async with http_client(app, "10.0.0.8") as http:
        spend = "{ benchmarks(first: 99) { nodes { slug } } }"  # 100 points
        for _ in range(3):
            assert (await http.post("/graphql", json={"query": spend})).status_code == 200
        calls.clear()
        batch = [{"query": FIFTY_POINTS}, {"query": spend}]  # 150 points, 100 left
        response = await http.post("/graphql", json=batch)
    assert response.status_code == 429
    assert calls == {}
    items = response.json()
    assert [codes(item) for item in items] == [["THROTTLED"], ["THROTTLED"]]
    assert "costs 50 points and 100 are left" in items[0]["errors"][0]["message"]
    assert "costs 100 points and 100 are left" in items[1]["errors"][0]["message"]
    assert all("data" not in item for item in items)
    assert [item["extensions"]["cost"]["requestedQueryCost"] for item in items] == [0, 0]
    assert response.headers["RateLimit-Remaining"] == "100"
