"""Budgets of points: a leaky bucket per client, as Shopify's GraphQL API meters its clients.

Each request pours its cost into the client's bucket, which drains at a steady rate (the
restore rate). A request that would overflow the bucket is refused until enough has drained.
`remaining` is the room left in the bucket: the most a request may cost right now.
"""

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from cachetools import LRUCache

from api_errors import ApiError, ErrorCode

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

    @property
    def remaining(self) -> int:
        return max(0, math.floor(self.policy.capacity - self.level))

    @property
    def retry_after(self) -> int:
        """Whole seconds until this request would fit (0 when it was allowed)."""
        if self.allowed:
            return 0
        overflow = self.level + self.cost - self.policy.capacity
        return max(1, math.ceil(self.policy.seconds_to_drain(overflow)))

    @property
    def reset_after(self) -> int:
        """Whole seconds until the bucket is empty again, the full capacity available."""
        return math.ceil(self.policy.seconds_to_drain(self.level))


def throttled_error(cost: int, allowance: Allowance) -> ApiError:
    return ApiError(
        f"This request costs {cost} points and {allowance.remaining} are left in your budget, "
        f"which refills at {allowance.policy.restore_rate:g} points a second. "
        f"Retry in {allowance.retry_after} seconds.",
        code=ErrorCode.THROTTLED,
        status=429,
        headers={"Retry-After": str(allowance.retry_after), "Cache-Control": "no-store"},
    )


class Budgets(Protocol):
    async def take(self, bucket: str, cost: int, policy: BucketPolicy) -> Allowance:
        """Pour `cost` into the bucket if it fits; say how full the bucket is afterwards."""
        ...

    async def close(self) -> None: ...


def poured(level: float, cost: int, capacity: int) -> tuple[bool, float]:
    """Whether `cost` fits into a bucket holding `level`, and the level afterwards."""
    if level + cost <= capacity:
        return True, level + cost
    return False, level


def drained(level: float, seconds: float, policy: BucketPolicy) -> float:
    return max(0.0, level - max(0.0, seconds) * policy.restore_rate)


class LocalBudgets:
    """Buckets in this process: right for one process, or as the fallback when Redis fails."""

    def __init__(
        self, max_buckets: int = LOCAL_BUCKETS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.clock = clock
        self._buckets: LRUCache[str, tuple[float, float]] = LRUCache(maxsize=max_buckets)

    async def take(self, bucket: str, cost: int, policy: BucketPolicy) -> Allowance:
        now = self.clock()
        level, then = self._buckets.get(bucket, (0.0, now))
        allowed, level = poured(drained(level, now - then, policy), cost, policy.capacity)
        self._buckets[bucket] = (level, now)
        return Allowance(allowed=allowed, cost=cost, policy=policy, level=level)

    def hold(self, bucket: str, level: float) -> None:
        """Say that the bucket holds `level` now (as the shared budgets last said it did)."""
        self._buckets[bucket] = (level, self.clock())

    async def close(self) -> None:
        pass
