"""Leaky buckets drain with each request and refill with time: in this process and in Redis."""

import asyncio
import logging
import math
import re
import time
from collections.abc import AsyncIterator

import httpx
import pytest
from redis.asyncio import Redis

from request_limits import BucketPolicy, Budgets, LocalBudgets, RedisBudgets
from server.settings import Settings
from tests.conftest import free_port, redis_server

POLICY = BucketPolicy(capacity=100, restore_rate=10)


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture(params=["in-process", "redis"])
async def budgets(request: pytest.FixtureRequest, clock: Clock) -> AsyncIterator[Budgets]:
    if request.param == "in-process":
        yield LocalBudgets(clock=clock)
        return
    redis = Redis.from_url(request.getfixturevalue("redis_url"))
    await redis.flushdb()
    shared = RedisBudgets(redis, "test:", clock)
    yield shared
    await shared.close()


async def test_a_bucket_drains_then_refills(budgets: Budgets, clock: Clock) -> None:
    first = await budgets.take("key:a", 60, POLICY)
    assert (first.allowed, first.remaining, first.reset_after) == (True, 40, 6)
    refused = await budgets.take("key:a", 50, POLICY)
    assert not refused.allowed
    assert refused.remaining == 40
    assert refused.retry_after == 1  # 10 points drain in a second
    clock.now += 1
    assert (await budgets.take("key:a", 50, POLICY)).allowed
    clock.now += 100
    assert (await budgets.take("key:a", 0, POLICY)).remaining == 100


async def test_fractions_round_to_what_a_client_can_rely_on(budgets: Budgets, clock: Clock) -> None:
    """Points left round down, seconds to wait up: a client that waits as told is served."""
    assert (await budgets.take("key:a", 55, POLICY)).reset_after == 6  # 5.5 s to drain
    clock.now += 0.25  # 2.5 points back: 52.5 in the bucket
    now = await budgets.take("key:a", 0, POLICY)
    assert (now.allowed, now.remaining, now.reset_after) == (True, 47, 6)  # 47.5 and 5.25 s
    barely = await budgets.take("key:a", 48, POLICY)  # half a point over: 0.05 s
    assert (barely.allowed, barely.retry_after) == (False, 1)
    assert (await budgets.take("key:a", 60, POLICY)).retry_after == 2  # 12.5 points over


async def test_a_bucket_of_one_point_serves_a_request_of_one(
    budgets: Budgets, clock: Clock
) -> None:
    smallest = BucketPolicy(capacity=1, restore_rate=1)
    assert (await budgets.take("key:a", 1, smallest)).allowed
    refused = await budgets.take("key:a", 1, smallest)
    assert (refused.allowed, refused.remaining, refused.retry_after) == (False, 0, 1)


async def test_a_shared_bucket_is_forgotten_once_drained(clock: Clock, redis_url: str) -> None:
    """Redis keeps a bucket until it has drained (and a second more), in whole milliseconds
    however fractional the time: 1 point at 0.003 a second drains in 333.3 s."""
    failures: list[None] = []
    redis = Redis.from_url(redis_url)
    await redis.flushdb()
    shared = RedisBudgets(redis, "test:", clock, on_failure=lambda: failures.append(None))
    slow = BucketPolicy(capacity=10, restore_rate=0.003)
    started = time.monotonic()
    assert (await shared.take("key:a", 1, slow)).allowed
    left = await redis.pttl("test:budget:key:a")
    # Less the time the take and this read took: a bound that holds on any machine.
    since = math.ceil((time.monotonic() - started) * 1000)
    assert 333_334 + 1_000 - since <= left <= 333_334 + 1_000
    assert (await shared.take("key:a", 9, slow)).remaining == 0  # shared, not this process's
    assert failures == []
    await shared.close()


async def test_an_outage_of_redis_is_said_once_with_what_happens_meanwhile(
    clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    slow = BucketPolicy(capacity=100, restore_rate=0.001)  # the fallback's clock is the real one
    port = free_port()
    with redis_server(port) as url:
        shared = RedisBudgets(Redis.from_url(url), "test:", clock)
        assert (await shared.take("key:a", 30, slow)).remaining == 70
    with caplog.at_level(logging.WARNING, logger="almanac.limits"):
        assert (await shared.take("key:a", 10, slow)).remaining == 60  # from the level held
        assert (await shared.take("key:a", 10, slow)).remaining == 50
        [failed] = [record.getMessage() for record in caplog.records]
        assert re.fullmatch(
            r"Redis failed \((?!None\)).+\): budgets are metered in this process until it is "
            "back, each from its last level known here",
            failed,
        ), failed
        caplog.clear()
        with redis_server(port):
            deadline = asyncio.get_running_loop().time() + 30  # generous: a loaded machine
            while not caplog.records:
                assert asyncio.get_running_loop().time() < deadline, "never back"
                await shared.take("key:b", 0, slow)
                await asyncio.sleep(0.05)
            messages = [record.getMessage() for record in caplog.records]
            assert messages == ["Redis is back: budgets are shared by every process again"]
            await shared.close()


@pytest.fixture
def settings() -> Settings:
    """A budget of one point: the second request of an address is throttled."""
    return Settings(max_query_cost=1, anonymous_bucket_capacity=1, anonymous_restore_rate=0.001)


async def test_a_throttled_refusal_says_when_to_retry_and_is_not_stored(
    client: httpx.AsyncClient,
) -> None:
    assert (await client.post("/graphql", json={"query": "{ __typename }"})).status_code == 200
    malformed = await client.post(
        "/graphql", content=b'{"query": ', headers={"content-type": "application/json"}
    )
    assert malformed.status_code == 429
    assert malformed.headers["Retry-After"] == "1000"  # 1 point at 0.001 a second
    assert malformed.headers["Cache-Control"] == "no-store"
    [error] = malformed.json()["errors"]
    assert error["extensions"]["code"] == "THROTTLED"
    assert error["message"] == (
        "This request costs 1 points and 0 are left in your budget, which refills at 0.001 "
        "points a second. Retry in 1000 seconds."
    )


async def test_a_bucket_keeps_its_time_exactly(budgets: Budgets, clock: Clock) -> None:
    """At wall-clock seconds (as Redis is given them), a bucket refills by exactly what the time
    passed pours back: no drift from rounding the time it was last poured at (times and steps
    that binary floats hold exactly, so the arithmetic is exact too)."""
    fast = BucketPolicy(capacity=100, restore_rate=1_000_000)
    clock.now = 1_796_000_000.99609375
    assert (await budgets.take("key:a", 100, fast)).allowed
    clock.now += 2**-16  # 15.26 points back
    refilled = await budgets.take("key:a", 15, fast)
    assert (refilled.allowed, refilled.remaining) == (True, 0)


async def test_buckets_are_separate(budgets: Budgets) -> None:
    assert (await budgets.take("address:1", 100, POLICY)).allowed
    assert not (await budgets.take("address:1", 1, POLICY)).allowed
    assert (await budgets.take("address:2", 100, POLICY)).allowed


async def test_redis_failure_falls_back_to_this_process(clock: Clock) -> None:
    unreachable = RedisBudgets(Redis.from_url("redis://127.0.0.1:1/0"), "test:", clock)
    allowance = await unreachable.take("key:a", 30, POLICY)
    assert (allowance.allowed, allowance.remaining) == (True, 70)
    await unreachable.close()


@pytest.mark.parametrize(
    ("capacity", "restore_rate"), [(0, 10), (-5, 10), (100, 0), (100, -1), (100, float("inf"))]
)
def test_a_bucket_that_could_never_serve_is_refused(capacity: int, restore_rate: float) -> None:
    with pytest.raises(ValueError, match="a bucket"):
        BucketPolicy(capacity, restore_rate)


async def test_past_its_most_buckets_the_least_recently_charged_is_forgotten(clock: Clock) -> None:
    budgets = LocalBudgets(max_buckets=2, clock=clock)
    for bucket in ("key:a", "key:b", "key:a"):  # a charged last: b is the least recent
        await budgets.take(bucket, 100 if bucket == "key:b" else 50, POLICY)
    await budgets.take("key:c", 100, POLICY)
    assert (await budgets.take("key:b", 0, POLICY)).remaining == 100  # forgotten: full again
    assert (await budgets.take("key:c", 0, POLICY)).remaining == 0  # kept
