"""Slots for open subscriptions: a client's bound, in this process and across processes in
Redis, where a lease lapses unless renewed (on a clock the tests move), and this process counts
alone while Redis fails."""

import asyncio
import logging
import time
import uuid
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from request_limits import AllTaken, LocalSlots, RedisSlots, Slots
from request_limits.slots import LEASE_SECONDS

DEADLINE = 60.0  # seconds: generous, for a loaded machine; no test waits it out when it works


class Clock:
    def __init__(self) -> None:
        self.now = 1_796_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_url)
    yield client
    await client.aclose()


@pytest.fixture
def prefix() -> str:
    return f"almanac-test-{uuid.uuid4().hex}:"


def shared(redis: Redis, prefix: str, clock: Clock, renew_seconds: float = 3_600) -> RedisSlots:
    """Slots in Redis as one process sees them; renewed only as often as the test says."""
    return RedisSlots(redis, prefix, clock, renew_seconds=renew_seconds)


@pytest.fixture(params=["in-process", "redis"])
def slots(request: pytest.FixtureRequest, clock: Clock) -> Slots:
    if request.param == "in-process":
        return LocalSlots()
    return shared(request.getfixturevalue("redis"), request.getfixturevalue("prefix"), clock)


async def test_a_client_holds_at_most_its_bound(slots: Slots) -> None:
    async with slots.held("key:a", 2), slots.held("key:a", 2):
        with pytest.raises(AllTaken) as taken:
            async with slots.held("key:a", 2):
                pass
        assert taken.value.held == 2
        async with slots.held("key:b", 2):  # another client's slots are its own
            assert slots.open == {"key:a": 2, "key:b": 1}
    assert slots.open == {}
    async with slots.held("key:a", 2), slots.held("key:a", 2):  # both given back
        pass


async def test_processes_share_one_bound(redis: Redis, prefix: str, clock: Clock) -> None:
    one, two = shared(redis, prefix, clock), shared(redis, prefix, clock)
    async with one.held("key:a", 1):
        with pytest.raises(AllTaken) as taken:
            async with two.held("key:a", 1):
                pass
        assert taken.value.held == 1
        assert two.open == {}
    async with two.held("key:a", 1):
        assert two.open == {"key:a": 1}


async def test_a_lease_never_renewed_lapses_and_frees_its_slot(
    redis: Redis, prefix: str, clock: Clock
) -> None:
    """As a process killed outright leaves its leases: they lapse by themselves."""
    vanished, other = shared(redis, prefix, clock), shared(redis, prefix, clock)
    async with vanished.held("key:a", 1):
        clock.now += LEASE_SECONDS - 1
        with pytest.raises(AllTaken):
            async with other.held("key:a", 1):
                pass
        clock.now += 2  # the lease lapsed: nobody renewed it
        async with other.held("key:a", 1):
            assert await redis.zcard(f"{prefix}subscriptions:key:a") == 1


async def test_a_lease_written_lapsed_is_pruned(redis: Redis, prefix: str, clock: Clock) -> None:
    key = f"{prefix}subscriptions:key:a"
    await redis.zadd(key, {"gone": clock.now - 1})
    async with shared(redis, prefix, clock).held("key:a", 1):
        held = await redis.zrange(key, 0, -1)
        assert len(held) == 1
        assert b"gone" not in held


async def test_an_open_stream_renews_its_lease(redis: Redis, prefix: str, clock: Clock) -> None:
    key = f"{prefix}subscriptions:key:a"
    renewing, other = shared(redis, prefix, clock, renew_seconds=0.01), shared(redis, prefix, clock)
    async with renewing.held("key:a", 1):
        clock.now += 10 * LEASE_SECONDS  # long past the first expiry
        deadline = time.monotonic() + DEADLINE
        while not await redis.zrangebyscore(key, clock.now + LEASE_SECONDS, "+inf"):
            assert time.monotonic() < deadline, "the lease was never renewed"
            await asyncio.sleep(0.01)
        with pytest.raises(AllTaken):
            async with other.held("key:a", 1):
                pass
    assert await redis.zcard(key) == 0  # removed as the stream ended


async def test_a_redis_failure_counts_in_this_process_and_says_so_once(
    clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    unreachable = Redis.from_url("redis://127.0.0.1:1/0")
    slots = shared(unreachable, "test:", clock)
    with caplog.at_level(logging.WARNING, logger="almanac.subscriptions"):
        async with slots.held("key:a", 1):
            with pytest.raises(AllTaken) as taken:
                async with slots.held("key:a", 1):
                    pass
            assert taken.value.held == 1
        async with slots.held("key:a", 1):  # given back here, though Redis never answered
            pass
    failed = [r.getMessage() for r in caplog.records if "Redis failed" in r.getMessage()]
    assert len(failed) == 1
    assert "counted in this process" in failed[0]
    await unreachable.aclose()
