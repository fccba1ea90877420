"""`rateLimit`: what the request costs and what is left of the caller's budget, as GitHub's
GraphQL API reports it. With `dryRun: true` the request is priced and checked, and nothing else
of it runs or is charged its cost (schema.extensions.metering)."""

from datetime import UTC, datetime, timedelta
from typing import Annotated

import strawberry

from schema.context import Context
from store import DateTime


@strawberry.type(description="What this request costs, and what is left of your budget.")
class RateLimit:
    cost: int = strawberry.field(
        description="What this request costs, in points (docs/partners.md has the rules)."
    )
    limit: int = strawberry.field(description="The most your budget holds, in points.")
    remaining: int = strawberry.field(
        description="The points left after this request (with `dryRun`: left now)."
    )
    restore_rate: float = strawberry.field(description="Points your budget regains a second.")
    reset_at: DateTime = strawberry.field(description="When your budget is full again.")


DryRun = Annotated[
    bool,
    strawberry.argument(
        description=(
            "Price and check the request, and run and charge none of it: the answer holds "
            "`rateLimit` only."
        )
    ),
]


def rate_limit(info: strawberry.Info[Context], dry_run: DryRun = False) -> RateLimit | None:
    """The caller's budget as this request left it; null where nothing is metered."""
    meter = info.context.meter
    if meter is None or meter.allowance is None:
        return None
    allowance = meter.allowance
    full_at = datetime.now(UTC) + timedelta(seconds=allowance.reset_after)
    return RateLimit(
        cost=meter.priced,
        limit=allowance.policy.capacity,
        remaining=allowance.remaining,
        restore_rate=allowance.policy.restore_rate,
        reset_at=DateTime(full_at.strftime("%Y-%m-%dT%H:%M:%SZ")),
    )
