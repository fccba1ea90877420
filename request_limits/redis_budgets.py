"""Budgets in Redis, shared by every API process: one atomic script per request.

The script drains and pours in one step on the Redis server, so two processes charging the
same bucket at once cannot both spend the same points. Time comes from the caller's clock
(wall-clock seconds), so processes on different hosts need synchronised clocks, as usual.
If Redis fails, requests are metered by this process's own buckets until it is back: the API
stays up, with limits per process. Each of those buckets starts where Redis last said the
client's bucket was (this process keeps the level of every bucket it charged), so a client
throttled just before the outage is not handed a full budget by it; a client this process never
saw starts with a full budget. One warning says Redis failed, and one that it is back.
"""

import logging
import time
from collections.abc import Callable

from redis.asyncio import Redis
from redis.exceptions import RedisError

from request_limits.budgets import LOCAL_BUCKETS, Allowance, BucketPolicy, LocalBudgets
from request_limits.redis_reachability import RedisReachability

log = logging.getLogger("almanac.limits")

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


class RedisBudgets:
    def __init__(
        self,
        redis: Redis,
        prefix: str,
        clock: Callable[[], float] = time.time,
        on_failure: Callable[[], None] = lambda: None,
        on_reachable: Callable[[bool], None] = lambda reachable: None,
        max_buckets: int = LOCAL_BUCKETS,
    ) -> None:
        self.on_failure = on_failure  # each request metered here instead
        self.redis = redis
        self.prefix = prefix
        self.clock = clock
        # The fallback: every bucket at the level Redis last gave it, metered here while
        # Redis is down.
        self.fallback = LocalBudgets(max_buckets)
        self.reachability = RedisReachability(
            log,
            down="budgets are metered in this process until it is back, each from its last "
            "level known here",
            back="budgets are shared by every process again",
            report=on_reachable,
        )
        self._take = redis.register_script(TAKE)

    async def take(self, bucket: str, cost: int, policy: BucketPolicy) -> Allowance:
        arguments: list[float | int | str] = [
            policy.capacity,
            policy.restore_rate,
            cost,
            repr(self.clock()),
        ]
        try:
            allowed, level = await self._take(
                keys=[f"{self.prefix}budget:{bucket}"], args=arguments
            )
        except RedisError as error:
            self.reachability.failed(error)
            self.on_failure()
            return await self.fallback.take(bucket, cost, policy)
        self.reachability.answered()
        self.fallback.hold(bucket, float(level))
        return Allowance(allowed=bool(allowed), cost=cost, policy=policy, level=float(level))

    async def close(self) -> None:
        await self.redis.aclose()
