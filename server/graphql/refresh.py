"""Refresh ahead: the kept answers a change retired, computed again before their readers ask.

Every change this process applies (its own and, through its change-log follower, every other
process's: store.changes) marks the kept answers it retires stale and queues those asked for
recently (schema.extensions.staleness). `Refresher.run` (the lifespan's, until shutdown) takes
them most asked first, `REFRESHES_AT_ONCE` at a time so that requests keep the most of the
process, each as the one execution of its operation (`Flights.claimed`: a request for it
meanwhile waits for the refresh, and takes its answer). A refresh is a request with no caller:
the same gate (parsed under the document limits, a query selected) and the same pipeline
(Strawberry's, with the schema's extensions, which keep its answer), under the request
timeout; charged to nobody (a kept answer is never a caller's own). One that fails keeps
nothing: the answer it was to replace is served until the staleness bound, then computed by a
reader.
"""

import asyncio
import logging
from typing import Literal

import orjson
from strawberry.http import GraphQLRequestData
from strawberry.types.graphql import OperationType

from schema import AlmanacSchema, OperationKey, new_context
from server.graphql.admission import QUERIES, Gate
from server.graphql.operations import KeptLookup
from server.observability import REFRESH_QUEUE, REFRESHES
from store import Store

log = logging.getLogger("almanac")

REFRESHES_AT_ONCE = 1
"""Refreshes a process runs at once: the rest of it answers requests. One: a refresh is CPU work
on the process's one thread, so a second at once only competes with the readers (the related-
writes bench: p99 1.71x and 1.88x quiet with one, 2.04x and 2.13x with two, the pages all new
as soon, 0.43-0.46 s p99; docs/performance.md)."""

Outcome = Literal["refreshed", "failed", "current"]


class Refresher:
    """The kept answers of one app, refreshed ahead of their readers (see the module)."""

    def __init__(self, kept: KeptLookup, gate: Gate, schema: AlmanacSchema, store: Store) -> None:
        self.kept, self.gate, self.schema, self.store = kept, gate, schema, store
        self.staleness = kept.services.staleness
        self.timeout = kept.charges.settings.request_timeout_seconds
        self.running = 0
        """Refreshes running now."""
        self.idle = asyncio.Event()  # set while nothing is queued or running
        self.idle.set()
        store.version.watch(self.changed)

    def changed(self, subjects: frozenset[str] | None) -> None:
        """A change counted: the answers it retires go stale, and are queued."""
        self.staleness.changed(subjects)
        if queued := len(self.staleness):
            self.idle.clear()
        REFRESH_QUEUE.set(queued)

    async def run(self) -> None:
        """Refresh what is queued, as it is queued, until cancelled (at shutdown: the app no
        longer watches its store, which may serve another)."""
        try:
            async with asyncio.TaskGroup() as refreshing:
                for _ in range(REFRESHES_AT_ONCE):
                    refreshing.create_task(self.refresh_queued())
        finally:
            self.store.version.unwatch(self.changed)

    async def settled(self) -> None:
        """Return once nothing is queued or being refreshed (what a test or a bench waits for)."""
        await self.idle.wait()
        while len(self.staleness) or self.running:
            # Queued as it was kept (stale from its start), with the refreshers idle: they
            # take it once woken, and are idle again when it is done.
            self.idle.clear()
            self.staleness.arrived.set()
            await self.idle.wait()

    async def refresh_queued(self) -> None:
        staleness = self.staleness
        while True:
            if (key := staleness.take()) is None:
                if not self.running:
                    self.idle.set()
                staleness.arrived.clear()
                await staleness.arrived.wait()
                continue
            REFRESH_QUEUE.set(len(staleness))
            self.running += 1
            try:
                outcome = await self.refresh(key)
            finally:
                self.running -= 1
            REFRESHES.labels(outcome).inc()

    async def refresh(self, key: OperationKey) -> Outcome:
        """Compute `key`'s answer again, as its one execution (after any running already)."""
        async with self.kept.flights.claimed(key):
            if not self.staleness.is_stale(key):
                return "current"  # a request computed it meanwhile
            try:
                async with asyncio.timeout(self.timeout):
                    failed = await self.execute(key)
            except Exception:  # a refresh is no request: its failure is logged, and kept nowhere
                log.exception("Could not refresh a kept answer (operation %s)", key[1])
                return "failed"
        return "failed" if failed else "refreshed"

    async def execute(self, key: OperationKey) -> bool:
        """The operation run as a request with no caller runs it: through the gate's parsing
        and Strawberry's pipeline (whose extensions keep its answer). Whether it failed."""
        text, name, variables = key
        context = new_context(self.store)
        context.services, context.operation = self.kept.services, key
        data = GraphQLRequestData(
            query=text, variables=orjson.loads(variables), operation_name=name, extensions=None
        )
        self.gate.parsed(context, data, text, QUERIES)
        result = await self.schema.execute(
            text,
            variable_values=data.variables,
            context_value=context,
            operation_name=name,
            allowed_operation_types=(OperationType.QUERY,),
        )
        if result.errors:
            log.warning(
                "A kept answer's refresh failed (operation %s): %s", name, result.errors[0].message
            )
        return bool(result.errors)
