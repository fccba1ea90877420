"""Budgets of points: a leaky bucket per client, as Shopify's GraphQL API meters its clients.

Each request pours its cost into the client's bucket, which drains at a steady rate (the
restore rate). A request that would overflow the bucket is refused until enough has drained.
`remaining` is the room left in the bucket: the most a request may cost right now.

The buckets are kept in this process (`LocalBudgets`), or in Redis for every API process
(`RedisBudgets`), through request_limits.shared: there one atomic script drains and pours, so
two processes charging the same bucket at once cannot both spend the same points. Time comes
from the caller's clock (wall-clock seconds with Redis), so processes on different hosts need
synchronised clocks, as usual. If Redis fails, requests are metered by this process's own
buckets until it is back: the API stays up, with limits per process. Each of those buckets
starts where Redis last said the client's bucket was (this process keeps the level of every
bucket it charged), so a client throttled just before the outage is not handed a full budget
by it; a client this process never saw starts with a full budget. One warning says Redis
failed, and one that it is back.
"""

import logging
import math
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis

from api_errors import ApiError, ErrorCode
from request_limits.shared import Argument, InProcess, InRedis, RedisReachability, Shared, Step

log = logging.getLogger("almanac.limits")

# Buckets kept in memory per process, by default; a forgotten bucket is one that has drained
# anyway (or belongs to one of very many addresses, which then start full again).
LOCAL_BUCKETS = 50_000


@dataclass(frozen=True)
class BucketPolicy:
    capacity: int
    restore_rate: float  # points per second

    def __post_init__(self) -> None:
        if self.capacity < 1:
            raise ValueError(f"a bucket holds at least 1 point, not {self.capacity}")
        if not 0 < self.restore_rate < math.inf:
            raise ValueError(f"a bucket refills at a positive rate, not {self.restore_rate}")

    def seconds_to_drain(self, level: float) -> float:
        return level / self.restore_rate


@dataclass(frozen=True)
class Allowance:
    """The outcome of pouring a request's cost into a bucket."""

    allowed: bool
    cost: int
    policy: BucketPolicy
    level: float  # points in the bucket afterwards
    remaining: int = field(init=False)
    """The room left in the bucket: the most a request may cost right now."""
    reset_after: int = field(init=False)
    """Whole seconds until the bucket is empty again, the full capacity available."""

    def __post_init__(self) -> None:
        # Both go with every answer (its report and headers): worked out once, as it is poured.
        object.__setattr__(self, "remaining", max(0, math.floor(self.policy.capacity - self.level)))
        object.__setattr__(self, "reset_after", math.ceil(self.policy.seconds_to_drain(self.level)))

    @property
    def retry_after(self) -> int:
        """Whole seconds until this request would fit (0 when it was allowed)."""
        if self.allowed:
            return 0
        overflow = self.level + self.cost - self.policy.capacity
        return max(1, math.ceil(self.policy.seconds_to_drain(overflow)))

    def headers(self) -> dict[str, str]:
        """The `RateLimit-*` headers: the bucket as this allowance left it."""
        return {
            "ratelimit-limit": str(self.policy.capacity),
            "ratelimit-remaining": str(self.remaining),
            "ratelimit-reset": str(self.reset_after),
        }


def charged(cost: int, allowance: Allowance | None) -> int:
    """What a request priced at `cost` was charged: nothing if the budget could not take it
    (its refusal, THROTTLED, states the cost)."""
    return cost if allowance is None or allowance.allowed else 0


def cost_report(cost: int, maximum: int, allowance: Allowance | None) -> dict[str, Any]:
    """What `extensions.cost` says of a request priced at `cost` (what it was charged), beside
    the most one request may cost, and the bucket as its allowance left it."""
    report: dict[str, Any] = {
        "requestedQueryCost": charged(cost, allowance),
        "maximumQueryCost": maximum,
    }
    if allowance is not None:
        report["throttleStatus"] = {
            "maximumAvailable": allowance.policy.capacity,
            "currentlyAvailable": allowance.remaining,
            "restoreRate": allowance.policy.restore_rate,
        }
    return report


def throttled_error(cost: int, allowance: Allowance) -> ApiError:
    return ApiError(
        f"This request costs {cost} points and {allowance.remaining} are left in your budget, "
        f"which refills at {allowance.policy.restore_rate:g} points a second. "
        f"Retry in {allowance.retry_after} seconds.",
        code=ErrorCode.THROTTLED,
        status=429,
        headers={"Retry-After": str(allowance.retry_after), "Cache-Control": "no-store"},
    )


def _read_take(answer: Any) -> tuple[bool, float]:
    allowed, level = answer
    return bool(allowed), float(level)


# KEYS[1]: the bucket. ARGV: capacity, restore rate (points/s), cost, now (s).
# Returns {allowed (1/0), level afterwards as a string (Lua numbers lose their fraction)}.
# `at` is kept as the caller wrote it: tostring() keeps 14 digits, a tenth of a millisecond of
# wall-clock seconds, which would drift each bucket's level a little with every request.
TAKE = """
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local now = tonumber(ARGV[4])
local state = redis.call('HMGET', KEYS[1], 'level', 'at')
local level = tonumber(state[1]) or 0
local at = tonumber(state[2]) or now
level = math.max(0, level - math.max(0, now - at) * rate)
local allowed = 0
if level + cost <= capacity then
  level = level + cost
  allowed = 1
end
redis.call('HSET', KEYS[1], 'level', tostring(level), 'at', ARGV[4])
redis.call('PEXPIRE', KEYS[1], math.ceil(level / rate * 1000) + 1000)
return {allowed, tostring(level)}
"""


def _take_args(bucket: str, cost: int, policy: BucketPolicy, now: float) -> list[Argument]:
    return [policy.capacity, policy.restore_rate, cost, now]


def poured(level: float, cost: int, capacity: int) -> tuple[bool, float]:
    """Whether `cost` fits into a bucket holding `level`, and the level afterwards."""
    if level + cost <= capacity:
        return True, level + cost
    return False, level


def drained(level: float, seconds: float, policy: BucketPolicy) -> float:
    return max(0.0, level - max(0.0, seconds) * policy.restore_rate)


class Budgets:
    """Buckets kept where `shared` keeps them; this process also keeps the level each bucket it
    charged was left at (what it meters from while Redis fails)."""

    def __init__(
        self,
        shared: Shared,
        max_buckets: int = LOCAL_BUCKETS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.shared = shared
        self.clock = clock
        self.max_buckets = max_buckets
        # Each bucket's level and when it was last poured, least recently charged first.
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._take = shared.bound(
            Step(TAKE, _read_take, keys=self._keys, args=_take_args, here=self._poured_here)
        )

    async def take(self, bucket: str, cost: int, policy: BucketPolicy) -> Allowance:
        """Pour `cost` into the bucket if it fits; say how full the bucket is afterwards."""
        now = self.clock()
        allowed, level = await self._take(bucket, cost, policy, now)
        self._hold(bucket, level, now)
        return Allowance(allowed=allowed, cost=cost, policy=policy, level=level)

    def _keys(self, bucket: str, cost: int, policy: BucketPolicy, now: float) -> list[str]:
        return [self.shared.key(f"budget:{bucket}")]

    def _hold(self, bucket: str, level: float, now: float) -> None:
        """Keep the bucket's level (the one to meter from while Redis fails); forget the least
        recently charged bucket past `max_buckets`."""
        buckets = self._buckets
        buckets[bucket] = (level, now)
        buckets.move_to_end(bucket)
        if len(buckets) > self.max_buckets:
            buckets.popitem(last=False)

    async def _poured_here(
        self, bucket: str, cost: int, policy: BucketPolicy, now: float
    ) -> tuple[bool, float]:
        level, then = self._buckets.get(bucket, (0.0, now))
        return poured(drained(level, now - then, policy), cost, policy.capacity)

    async def close(self) -> None:
        await self.shared.close()


class LocalBudgets(Budgets):
    """Buckets in this process: right for one process."""

    def __init__(
        self, max_buckets: int = LOCAL_BUCKETS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__(InProcess(), max_buckets, clock)


class RedisBudgets(Budgets):
    """Buckets in Redis, shared by every API process; in this process while Redis fails."""

    def __init__(
        self,
        redis: Redis,
        prefix: str,
        clock: Callable[[], float] = time.time,
        on_failure: Callable[[], None] = lambda: None,
        on_reachable: Callable[[bool], None] = lambda reachable: None,
        max_buckets: int = LOCAL_BUCKETS,
    ) -> None:
        self.redis = redis
        reachability = RedisReachability(
            log,
            down="budgets are metered in this process until it is back, each from its last "
            "level known here",
            back="budgets are shared by every process again",
            report=on_reachable,
        )
        super().__init__(InRedis(redis, prefix, reachability, on_failure), max_buckets, clock)
