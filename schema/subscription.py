"""Subscriptions: the change feed as it happens (schema.types.changes), each change pushed to the
subscriber once it is in the log, in order, from a cursor or from now.

The subscriber reads the store's change log, then waits for the process's `DataVersion` to
move (it moves with every change this process makes, and with every other process's as the
store's follower reads it), and reads again; a few seconds' timeout is the backstop. The log
is the only buffer: a slow subscriber is a cursor behind, never a queue in memory.

Each event costs what the subscription's selection costs, priced once by the request's
`Meter` as the subscription is admitted (server.graphql.admission; the Metering extension prices and
charges it as any operation, so starting one costs one event) and paid before it is sent; a
subscriber whose budget cannot pay is told so (THROTTLED) and the subscription ends.
"""

import sys
from collections.abc import AsyncGenerator

import strawberry

from request_limits import throttled_error
from schema.context import Context
from schema.types import ALL_PUBLIC, Change, ChangeFilterInput, cursor_place

PAGE = 100
"""Changes read from the log at once (and so the most held for one subscriber)."""


def priced(info: strawberry.Info[Context]) -> int | None:
    """What each event of this subscription costs (None: not metered, as from the CLI): the
    price the request's Meter set as the pipeline admitted it (schema.extensions.metering)."""
    meter = info.context.meter
    return None if meter is None else meter.priced


async def pay(context: Context, cost: int | None) -> None:
    """Pay for one event, or end the subscription (THROTTLED) if the budget cannot."""
    if context.meter is None or cost is None:
        return
    allowance = await context.meter.charge(cost)
    if not allowance.allowed:
        raise throttled_error(cost, allowance).as_graphql_error()


@strawberry.type(name="Subscription")
class Subscription:
    @strawberry.subscription(
        description=(
            "Each change to the almanac's data as it is made, oldest first: after the change "
            "`after` names (a cursor of the change feed, `Query.changes`, or a change's "
            "`cursor`), or from now. Reconnect with the last change's `cursor` to miss "
            "nothing. Each change sent costs what its selection costs, as a query would; a "
            "subscriber out of budget gets a THROTTLED error and the subscription ends."
        )
    )
    async def changes(
        self,
        info: strawberry.Info[Context],
        filter: ChangeFilterInput | None = None,
        after: str | None = None,
    ) -> AsyncGenerator[Change, None]:
        context = info.context
        cost = priced(info)
        sequence, _, _ = await cursor_place(context, after, default=sys.maxsize)
        where = ALL_PUBLIC if filter is None else filter.to_store_filter()
        version = context.store.version
        while True:
            seen = version.count  # before the read: a change made during it wakes the wait
            logged = await context.store.changes_after(sequence, PAGE, where)
            for change in logged:
                await pay(context, cost)
                sequence = change.sequence
                context.forget_loaded()  # each event reads the data as it is now
                yield Change.from_logged(change)
            if len(logged) < PAGE:
                await version.newer_than(seen)  # or, as a backstop, a few seconds
