"""An operation's text and its kept answer, each found once per operation for the `/graphql` view.

The text is the one sent, or the persisted one its hash names (server.graphql.persisted); the
kept answer is the one computed for the same text, name and variables on the same data
(schema.extensions.answer_reuse), paid for as if it ran (server.charges), or one a change
retired, for at most `ALMANAC_MAX_STALENESS_SECONDS` past the change, marked stale.
"""

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import orjson
from starlette.requests import Request
from starlette.responses import Response
from strawberry.http import GraphQLRequestData
from strawberry.types import ExecutionResult

from api_errors import ApiError, ErrorCode
from schema import (
    Answered,
    CachedAnswer,
    Context,
    OperationKey,
    Services,
    answer_within,
    operation_key,
)
from server.charges import MINIMUM, Charges
from server.exchange import Exchange
from server.graphql.persisted import PersistedQueries
from server.graphql.response import VARY
from server.http_caching import age, cache_control, held_etag
from server.observability import (
    EXECUTED,
    KEPT_HIT,
    KEPT_MISS,
    PERSISTED_QUERIES,
    STALE_ANSWER_AGE,
    STALE_ANSWERS,
)


@dataclass(frozen=True)
class OperationText:
    persisted: PersistedQueries

    async def resolve(self, context: Context, request_data: GraphQLRequestData) -> str:
        """The operation's text (sent, or persisted), found once per operation of a request
        (or refused); it also names the operation in the context (`Context.operation`)."""
        text = await self.find(context, request_data)
        context.operation = operation_key(text, request_data.operation_name, request_data.variables)
        context.admitted = None  # not yet: its document is parsed only if it is to run
        context.answered = None  # nor answered
        return text

    async def find(self, context: Context, request_data: GraphQLRequestData) -> str:
        identity = context.identity
        try:
            text, found = await self.persisted.document_text(
                request_data.query,
                request_data.extensions,
                may_run_any=identity is not None and identity.is_admin,
            )
        except ApiError as refusal:
            if refusal.code == ErrorCode.PERSISTED_QUERY_NOT_FOUND:
                PERSISTED_QUERIES.labels("miss").inc()
            raise
        if found in ("hit", "registered"):
            PERSISTED_QUERIES.labels(found).inc()
        return text


@dataclass(frozen=True)
class Kept:
    answer: CachedAnswer
    cost: int
    stale_seconds: float | None = None  # past the first change it misses; None: fresh


@dataclass(frozen=True)
class KeptLookup:
    services: Services
    charges: Charges
    flights: "Flights" = field(default_factory=lambda: Flights())

    async def or_run(
        self, context: Context, exchange: Exchange, run: Callable[[], Awaitable[ExecutionResult]]
    ) -> ExecutionResult:
        """The operation run, once for all the requests asking it at once: one that waited
        for another's run takes the answer that run kept, if it kept one."""
        async with self.flights.one(context, exchange.deadline) as waited:
            if not waited or (kept := self.find(context)) is None:
                EXECUTED.inc()
                return await run()
        return await self.pay(context, exchange, kept)

    def find(self, context: Context) -> Kept | None:
        """The answer kept for the context's operation on this data (or stale within the bound,
        and at least as fresh as the caller asked), and its cost; else None."""
        assert context.operation is not None
        cost = self.services.costs.get(context.operation)
        bound = self.charges.settings.max_staleness_seconds
        version = context.store.version
        found = answer_within(self.services, context.operation, version, bound, context.min_change)
        if found is None or cost is None:
            KEPT_MISS.inc()
            return None
        KEPT_HIT.inc()
        kept, stale = found
        if stale is None:  # nothing it read changed: it reflects every change applied
            context.answered = Answered(version.applied_through)
        else:
            STALE_ANSWERS.inc()
            STALE_ANSWER_AGE.observe(stale)
            context.answered = Answered(kept.reflects, stale)
        return Kept(kept, cost, stale)

    async def pay(self, context: Context, exchange: Exchange, kept: Kept) -> ExecutionResult:
        """The kept answer, paid for as if it ran (or the throttle's refusal)."""
        assert context.meter is not None
        if (throttled := await self.charges.charge_kept(context.meter, kept.cost)) is not None:
            return ExecutionResult(data=None, errors=[throttled.as_graphql_error()])
        exchange.digest, exchange.reads = kept.answer.digest, kept.answer.reads
        if exchange.operation != "batch":
            exchange.operation = kept.answer.operation_name
        return ExecutionResult(data=orjson.Fragment(kept.answer.data), errors=None)  # type: ignore[arg-type]

    async def held(
        self, request: Request, context: Context, exchange: Exchange, kept: Kept
    ) -> Response | None:
        """A 304 for a GET whose `If-None-Match` names the kept answer's ETag: the client
        holds it already, and pays the minimum for being told."""
        etag = held_etag(request, kept.answer.digest)
        if etag is None:
            return None
        exchange.cost, exchange.operation = MINIMUM, kept.answer.operation_name
        settings, public = self.charges.settings, context.identity is None
        control = cache_control(
            public, settings.cache_max_age_seconds, settings.max_staleness_seconds
        )
        headers = {"etag": etag, "cache-control": control, "vary": VARY}
        if kept.stale_seconds is not None:
            headers["age"] = age(kept.stale_seconds)
        return await self.charges.not_modified(request, context.identity, headers)


class Flights:
    """One execution per miss: concurrent requests for the same operation wait for the first
    to run it, then take the answer it kept if nothing it read changed meanwhile (single
    flight, per process)."""

    def __init__(self) -> None:
        self.running: dict[OperationKey, asyncio.Event] = {}

    @asynccontextmanager
    async def one(self, context: Context, deadline: float | None) -> AsyncIterator[bool]:
        """Whether this request waited for another's execution of its operation (then it
        looks for the answer kept, and runs the operation itself only if there is none)."""
        key = context.operation
        if key is None or context.store.version.current is None:
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
