"""Leaky buckets drain with each request and refill with time: in this process and in Redis."""

from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from request_limits.budgets import BucketPolicy, Budgets, LocalBudgets
from request_limits.redis_budgets import RedisBudgets

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
