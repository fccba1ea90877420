"""Who a request comes from, and what it is charged: the budget of its API key, or of its
client's address. The `/graphql` view and the downloads meter alike."""

from dataclasses import dataclass, replace
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from api_errors import ApiError
from request_limits import REFUSED_COST, Allowance, Budgets, throttled_error
from schema import Identity
from server.api_keys import InvalidCredentials, authenticate
from server.errors import refusal_response
from server.metrics import COST, THROTTLED
from server.settings import Settings


@dataclass(frozen=True)
class ClientBudgets:
    settings: Settings
    budgets: Budgets

    async def identify(self, request: Request) -> Identity | None:
        """The request's API key, if it has one (refused if bad, or if one is needed)."""
        identity = await authenticate(request.app.state.store, request.headers.get("authorization"))
        if identity is None and not self.settings.anonymous_access:
            raise InvalidCredentials(
                "This API needs an API key: send `Authorization: Bearer <key>`."
            )
        return identity

    async def charge(self, request: Request, identity: Identity | None, cost: int) -> Allowance:
        if identity is not None:
            bucket, policy = f"key:{identity.name}", identity.budget or self.settings.key_budget
            if policy.capacity < self.settings.max_query_cost:
                # A key's own budget set below a maximum raised since: every allowed request
                # must fit the bucket, or the client would be told to retry in vain.
                policy = replace(policy, capacity=self.settings.max_query_cost)
        else:
            address = request.client.host if request.client else "unknown"
            bucket, policy = f"address:{address}", self.settings.anonymous_budget
        allowance = await self.budgets.take(bucket, cost, policy)
        if allowance.allowed:
            COST.inc(cost)
        else:
            THROTTLED.inc()
        return allowance

    async def refused(
        self, request: Request, identity: Identity | None, refusal: ApiError
    ) -> Response:
        """A request refused over HTTP is charged like a refused operation, or throttled."""
        allowance = await self.charge(request, identity, REFUSED_COST)
        if not allowance.allowed:
            refusal = throttled_error(REFUSED_COST, allowance)
        return refusal_response(
            refusal,
            {"cost": self.cost_report(REFUSED_COST, allowance)},
            rate_limit_headers(allowance),
        )

    def cost_report(self, cost: int, allowance: Allowance | None) -> dict[str, Any]:
        """What `extensions.cost` says of a request."""
        report: dict[str, Any] = {
            "requestedQueryCost": cost,
            "maximumQueryCost": self.settings.max_query_cost,
        }
        if allowance is not None:
            report["throttleStatus"] = {
                "maximumAvailable": allowance.policy.capacity,
                "currentlyAvailable": allowance.remaining,
                "restoreRate": allowance.policy.restore_rate,
            }
        return report


def rate_limit_headers(allowance: Allowance) -> dict[str, str]:
    return {
        "ratelimit-limit": str(allowance.policy.capacity),
        "ratelimit-remaining": str(allowance.remaining),
        "ratelimit-reset": str(allowance.reset_after),
    }
