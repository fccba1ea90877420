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
with the bound per process), as budgets are (request_limits.shared keeps both). A stream
admitted then is still renewed, so it holds a lease once Redis answers again. One warning says
Redis failed, and one that it is back.

The slots are the subscriptions' limit; the subscriptions themselves
(server.graphql.subscriptions) take one for each stream.
"""

import asyncio
import contextlib
import logging
import math
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from redis.asyncio import Redis

from request_limits.shared import Argument, InProcess, InRedis, RedisReachability, Shared, Step

log = logging.getLogger("almanac.subscriptions")

LEASE_SECONDS = 60.0
"""How long a lease lasts unless renewed: the most a killed process's slots stay taken."""
RENEW_SECONDS = 15.0
"""How often an open stream renews its lease: three renewals may fail before it lapses."""


def _admitted(answer: Any) -> tuple[bool, int]:
    admitted, held = answer
    return bool(admitted), int(held)


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

# KEYS[1]: the client's leases. ARGV: the stream ended (if Redis fails, its lease lapses).
RELEASE = "return redis.call('ZREM', KEYS[1], ARGV[1])"


def _ignored(answer: object) -> None:
    """What Redis answers to renewing or giving back a lease tells its caller nothing."""


async def _nothing(*args: object) -> None:
    """What renewing or giving back a lease gives in this process (there is no lease)."""


def _lease(key: str, *args: object) -> list[str]:
    return [key]


def _stream(key: str, stream: str) -> list[Argument]:
    return [stream]


class AllTaken(Exception):
    """The client holds its most streams already: `held` of them."""

    def __init__(self, held: int) -> None:
        super().__init__(f"{held} slots held")
        self.held = held


class Slots:
    """Slots counted where `shared` keeps them: with leases that lapse unless renewed when
    every process shares them; `open` counts this process's streams, by client."""

    def __init__(
        self,
        shared: Shared,
        clock: Callable[[], float] = time.time,
        lease_seconds: float = LEASE_SECONDS,
        renew_seconds: float = RENEW_SECONDS,
    ) -> None:
        self.shared = shared
        self.clock = clock
        self.lease_seconds = lease_seconds
        self.renew_seconds = renew_seconds
        # An idle client's set goes once its last lease could have lapsed (with room for skew).
        self.key_seconds = math.ceil(2 * lease_seconds) + 1
        self.open: Counter[str] = Counter()
        self._take = shared.bound(
            Step(TAKE, _admitted, keys=self._take_keys, args=self._take_args, here=self._here)
        )
        self._renew: Callable[[str, str], Awaitable[None]] = shared.bound(
            Step(RENEW, _ignored, keys=_lease, args=self._renew_args, here=_nothing)
        )
        self._release: Callable[[str, str], Awaitable[None]] = shared.bound(
            Step(RELEASE, _ignored, keys=_lease, args=_stream, here=_nothing)
        )

    def key(self, client: str) -> str:
        return self.shared.key(f"subscriptions:{client}")

    @contextlib.asynccontextmanager
    async def held(self, client: str, bound: int) -> AsyncIterator[None]:
        """One of `client`'s slots, held while the block runs; AllTaken if it holds `bound`."""
        stream = uuid.uuid4().hex
        admitted, held = await self._take(client, bound, stream, self.clock())
        if not admitted:
            raise AllTaken(held)
        self.open[client] += 1
        key, renewing = self.key(client), None
        if self.shared.everywhere:
            renewing = asyncio.create_task(self.renew_every(key, stream))
        try:
            yield
        finally:
            release(self.open, client)
            if renewing is not None:
                renewing.cancel()
                await asyncio.gather(renewing, return_exceptions=True)
                await self._release(key, stream)

    async def renew_every(self, key: str, stream: str) -> None:
        while True:
            await asyncio.sleep(self.renew_seconds)
            await self._renew(key, stream)

    async def _here(self, client: str, bound: int, stream: str, now: float) -> tuple[bool, int]:
        return self.open[client] < bound, self.open[client]

    def _take_keys(self, client: str, bound: int, stream: str, now: float) -> list[str]:
        return [self.key(client)]

    def _take_args(self, client: str, bound: int, stream: str, now: float) -> list[Argument]:
        return [now, now + self.lease_seconds, bound, stream, self.key_seconds]

    def _renew_args(self, key: str, stream: str) -> list[Argument]:
        return [self.clock() + self.lease_seconds, stream, self.key_seconds]


class LocalSlots(Slots):
    """Slots counted in this process: right for one process."""

    def __init__(self) -> None:
        super().__init__(InProcess())


class RedisSlots(Slots):
    """Slots counted in Redis, across every process; in this process while Redis fails."""

    def __init__(
        self,
        redis: Redis,
        prefix: str,
        clock: Callable[[], float] = time.time,
        lease_seconds: float = LEASE_SECONDS,
        renew_seconds: float = RENEW_SECONDS,
    ) -> None:
        reachability = RedisReachability(
            log,
            down="open subscriptions are counted in this process until it is back",
            back="open subscriptions are counted across every process again",
        )
        shared = InRedis(redis, prefix, reachability)
        super().__init__(shared, clock, lease_seconds, renew_seconds)


def release(open_streams: Counter[str], client: str) -> None:
    open_streams[client] -= 1
    if open_streams[client] <= 0:
        del open_streams[client]
