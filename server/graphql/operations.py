"""An operation's kept answer, found once per operation for the `/graphql` view.

The kept answer is the one computed for the same text, name and variables on the same data
(schema.extensions.answer_reuse), paid for as if it ran (server.charges), or one a change
retired, for at most `ALMANAC_MAX_STALENESS_SECONDS` past the change, marked stale; and how
fresh it is (`extensions.freshness`), found with it. Its key and its minimum change come from
the gate (server.graphql.admission); the lookup needs no request context.
"""

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response
from strawberry.types import ExecutionResult

from api_errors import client_facing
from schema import Answered, CachedAnswer, Identity, Meter, OperationKey, Services, answer_within
from server.charges import MINIMUM, Charges
from server.exchange import Exchange
from server.graphql.admission import Operation
from server.graphql.response import VARY, with_freshness
from server.http_caching import age, cache_control, held_etag
from server.observability import EXECUTED, KEPT_HIT, KEPT_MISS, STALE_ANSWER_AGE, STALE_ANSWERS
from store import DataVersion


@dataclass(frozen=True)
class Kept:
    answer: CachedAnswer
    cost: int
    answered: Answered
    """How fresh it is: the change it reflects, and if stale, for how long."""

    @property
    def stale_seconds(self) -> float | None:  # past the first change it misses; None: fresh
        return self.answered.stale_seconds


@dataclass(frozen=True)
class Served:
    """A kept answer as the request gets it: its result (or the throttle's refusal), how fresh
    it is, and the budget's headers after it was paid for."""

    result: ExecutionResult
    answered: Answered | None
    budget_headers: dict[str, str]


@dataclass(frozen=True)
class KeptLookup:
    services: Services
    charges: Charges
    version: DataVersion  # the store's, read once: what a kept answer is checked against
    flights: "Flights" = field(default_factory=lambda: Flights())

    async def or_run(
        self,
        key: OperationKey,
        deadline: float | None,
        run: Callable[[], Awaitable[ExecutionResult]],
        min_change: int | None = None,
    ) -> ExecutionResult | Kept:
        """The operation run, once for all the requests asking it at once: one that waited
        for another's run takes the answer that run kept, if it kept one."""
        async with self.flights.one(key, self.version, deadline) as waited:
            if not waited or (kept := self.find(key, min_change)) is None:
                EXECUTED.inc()
                return await run()
        return kept

    def find(self, key: OperationKey, min_change: int | None) -> Kept | None:
        """The answer kept for the operation `key` names on this data (or stale within the
        bound, and reflecting at least `min_change`), its cost and how fresh it is; else None."""
        cost = self.services.costs.get(key)
        bound = self.charges.settings.max_staleness_seconds
        version = self.version
        found = answer_within(self.services, key, version, bound, min_change)
        if found is None or cost is None:
            KEPT_MISS.inc()
            return None
        KEPT_HIT.inc()
        kept, stale = found
        if stale is None:  # nothing it read changed: it reflects every change applied
            return Kept(kept, cost, Answered(version.applied_through))
        STALE_ANSWERS.inc()
        STALE_ANSWER_AGE.observe(stale)
        return Kept(kept, cost, Answered(kept.reflects, stale))

    async def answer(
        self,
        request: Request,
        identity: Identity | None,
        exchange: Exchange,
        meter: Meter,
        operation: Operation,
        variables: dict[str, Any] | None,
    ) -> Served | Response | None:
        """The one path of a kept answer: the answer kept for the operation (`find`), for a GET
        whose client holds it already its 304 (`held`), else served (`served`); None if there
        is none to serve."""
        kept = self.find(operation.key, operation.min_change)
        if kept is None:
            return None
        if request.method == "GET" and (
            not_modified := await self.held(request, identity, exchange, kept)
        ):
            return not_modified
        return await self.served(kept, meter, exchange, variables)

    async def served(
        self, kept: Kept, meter: Meter, exchange: Exchange, variables: dict[str, Any] | None
    ) -> Served:
        """The kept answer, paid for as if it ran (or the throttle's refusal), its cost and
        freshness reported."""
        throttled, report, headers = await self.charges.settle_kept(meter, kept.cost)
        extensions = {"cost": report}
        if throttled is not None:
            error = client_facing(throttled.as_graphql_error(), variables)
            return Served(ExecutionResult(None, [error], extensions), None, headers)
        exchange.digest, exchange.reads = kept.answer.digest, kept.answer.reads
        if exchange.operation != "batch":
            exchange.operation = kept.answer.operation_name
        data: Any = orjson.Fragment(kept.answer.data)  # written as it is
        result = ExecutionResult(data, None, extensions)
        return Served(with_freshness(kept.answered, result), kept.answered, headers)

    async def held(
        self, request: Request, identity: Identity | None, exchange: Exchange, kept: Kept
    ) -> Response | None:
        """A 304 for a GET whose `If-None-Match` names the kept answer's ETag: the client
        holds it already, and pays the minimum for being told."""
        etag = held_etag(request, kept.answer.digest)
        if etag is None:
            return None
        exchange.cost, exchange.operation = MINIMUM, kept.answer.operation_name
        settings = self.charges.settings
        control = cache_control(
            identity is None, settings.cache_max_age_seconds, settings.max_staleness_seconds
        )
        headers = {"etag": etag, "cache-control": control, "vary": VARY}
        if kept.stale_seconds is not None:
            headers["age"] = age(kept.stale_seconds)
        return await self.charges.not_modified(request, identity, headers)


class Flights:
    """One execution per miss: concurrent requests for the same operation wait for the first
    to run it, then take the answer it kept if nothing it read changed meanwhile (single
    flight, per process)."""

    def __init__(self) -> None:
        self.running: dict[OperationKey, asyncio.Event] = {}

    @asynccontextmanager
    async def one(
        self, key: OperationKey, version: DataVersion, deadline: float | None
    ) -> AsyncIterator[bool]:
        """Whether this request waited for another's execution of its operation (then it
        looks for the answer kept, and runs the operation itself only if there is none)."""
        if version.current is None:
            yield False
            return
        if (running := self.running.get(key)) is not None:
            async with asyncio.timeout_at(deadline):
                await running.wait()
            yield True
            return
        async with self.claimed(key):
            yield False

    @asynccontextmanager
    async def claimed(self, key: OperationKey) -> AsyncIterator[None]:
        """This operation's one execution: after any running now, and before any other (a
        refresh ahead of readers claims it so: server.graphql.refresh)."""
        while (running := self.running.get(key)) is not None:
            await running.wait()
        self.running[key] = done = asyncio.Event()
        try:
            yield
        finally:
            del self.running[key]
            done.set()
