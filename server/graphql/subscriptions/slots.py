"""Slots for open subscriptions: how many streams each client holds, in this process or, with
Redis, across every process.

With Redis, each open stream holds a lease: a member of its client's sorted set, scored with
the time it lapses. One script prunes the lapsed leases, counts the rest and adds the new one if
the client is under its bound, so two processes admitting at once cannot both take the last
slot. The stream's process renews its lease every RENEW_SECONDS while it is open and removes it
when it ends; a process killed outright renews nothing, so its leases lapse by themselves
within LEASE_SECONDS and their slots come back. Time comes from the caller's clock (wall-clock
seconds), so processes on different hosts need synchronised clocks, as budgets do.

If Redis fails, streams are counted in this process alone until it is back (the API stays up,
with the bound per process), as budgets are (request_limits.RedisBudgets). A stream admitted
then is still renewed, so it holds a lease once Redis answers again. One warning says Redis
failed, and one that it is back.
"""

import asyncio
import contextlib
import logging
import math
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Callable
from typing import Protocol

from redis.asyncio import Redis
from redis.exceptions import RedisError

from request_limits import RedisReachability

log = logging.getLogger("almanac.subscriptions")

LEASE_SECONDS = 60.0
"""How long a lease lasts unless renewed: the most a killed process's slots stay taken."""
RENEW_SECONDS = 15.0
"""How often an open stream renews its lease: three renewals may fail before it lapses."""

# KEYS[1]: the client's leases. ARGV: now, the new lease's expiry, bound, stream, key seconds.
# Returns {admitted (1/0), leases held (with the new one if admitted)}.
TAKE = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
local held = redis.call('ZCARD', KEYS[1])
if held >= tonumber(ARGV[3]) then
  return {0, held}
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
redis.call('EXPIRE', KEYS[1], ARGV[5])
return {1, held + 1}
"""

# KEYS[1]: the client's leases. ARGV: the lease's new expiry, stream, key seconds. Added again
# if it lapsed (Redis out of reach for a while): the stream is open, so it is counted.
RENEW = """
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
return 1
"""


class AllTaken(Exception):
    """The client holds its most streams already: `held` of them."""

    def __init__(self, held: int) -> None:
        super().__init__(f"{held} slots held")
        self.held = held


class Slots(Protocol):
    @property
    def open(self) -> Counter[str]:
        """The streams open in this process, by client."""

    def held(self, client: str, bound: int) -> contextlib.AbstractAsyncContextManager[None]:
        """One of `client`'s slots, held while the block runs; AllTaken if it holds `bound`."""


class LocalSlots:
    """Slots counted in this process: right for one process."""

    def __init__(self) -> None:
        self.open: Counter[str] = Counter()

    @contextlib.asynccontextmanager
    async def held(self, client: str, bound: int) -> AsyncIterator[None]:
        if self.open[client] >= bound:
            raise AllTaken(self.open[client])
        self.open[client] += 1
        try:
            yield
        finally:
            release(self.open, client)


class RedisSlots:
    """Slots counted in Redis, across every process; in this process while Redis fails."""

    def __init__(
        self,
        redis: Redis,
        prefix: str,
        clock: Callable[[], float] = time.time,
        lease_seconds: float = LEASE_SECONDS,
        renew_seconds: float = RENEW_SECONDS,
    ) -> None:
        self.redis = redis
        self.prefix = prefix
        self.clock = clock
        self.lease_seconds = lease_seconds
        self.renew_seconds = renew_seconds
        # An idle client's set goes once its last lease could have lapsed (with room for skew).
        self.key_seconds = math.ceil(2 * lease_seconds) + 1
        self.open: Counter[str] = Counter()
        self.reachability = RedisReachability(
            log,
            down="open subscriptions are counted in this process until it is back",
            back="open subscriptions are counted across every process again",
        )
        self._take = redis.register_script(TAKE)
        self._renew = redis.register_script(RENEW)

    def key(self, client: str) -> str:
        return f"{self.prefix}subscriptions:{client}"

    @contextlib.asynccontextmanager
    async def held(self, client: str, bound: int) -> AsyncIterator[None]:
        stream = uuid.uuid4().hex
        await self.take(client, bound, stream)
        self.open[client] += 1
        renewing = asyncio.create_task(self.renew_every(client, stream))
        try:
            yield
        finally:
            release(self.open, client)
            renewing.cancel()
            await asyncio.gather(renewing, return_exceptions=True)
            try:
                await self.redis.zrem(self.key(client), stream)
            except RedisError as error:  # it lapses by itself
                self.reachability.failed(error)

    async def take(self, client: str, bound: int, stream: str) -> None:
        now = self.clock()
        arguments: list[str | int] = [
            repr(now),
            repr(now + self.lease_seconds),
            bound,
            stream,
            self.key_seconds,
        ]
        try:
            admitted, held = await self._take(keys=[self.key(client)], args=arguments)
        except RedisError as error:
            self.reachability.failed(error)
            if self.open[client] >= bound:
                raise AllTaken(self.open[client]) from None
            return
        self.reachability.answered()
        if not admitted:
            raise AllTaken(int(held))

    async def renew_every(self, client: str, stream: str) -> None:
        while True:
            await asyncio.sleep(self.renew_seconds)
            expiry = repr(self.clock() + self.lease_seconds)
            try:
                await self._renew(keys=[self.key(client)], args=[expiry, stream, self.key_seconds])
            except RedisError as error:
                self.reachability.failed(error)
            else:
                self.reachability.answered()


def release(open_streams: Counter[str], client: str) -> None:
    open_streams[client] -= 1
    if open_streams[client] <= 0:
        del open_streams[client]
