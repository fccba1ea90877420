"""What a request costs, and when it is charged: every charge the API makes is made here.

A request is priced from what it asks, then charged (or refused) before any work is done for it:
- a GraphQL operation: its cost (`price_operation`, by request_limits.cost's rules), priced
  and paid by the schema's Metering extension through the request's `Meter` (the interface the
  schema defines, made here) before it runs; a batch is priced whole and paid once, before any
  of its operations runs (`pay_batch`);
- an answer kept from an earlier run: its operation's cost, as if it ran;
- a conditional request the client already holds the answer to (a 304): `MINIMUM`;
- a download: what its query costs for the rows it holds, counted by an indexed read before
  anything is made (`price_download`); the export: a point an item (`price_export`);
- a refusal, of any kind: `MINIMUM`.
The report goes with every answer: `extensions.cost` and `Almanac-Cost` (what was charged: 0
for a request the budget could not take), the `RateLimit-*` headers, and for a throttled request
429 with `Retry-After`.
"""

from dataclasses import dataclass, replace
from functools import cache, cached_property, partial
from typing import Any

from graphql import DocumentNode, parse
from starlette.requests import HTTPConnection, Request
from starlette.responses import Response
from strawberry.types import ExecutionResult

from api_errors import ApiError, ErrorCode, client_facing
from request_limits import (
    REFUSED_COST,
    Allowance,
    BucketPolicy,
    Budgets,
    charged,
    cost_report,
    query_cost,
    throttled_error,
)
from schema import LIST_SIZES, Identity, Meter, MeterMode, published_types, schema
from server.api_keys import InvalidCredentials, authenticate
from server.errors import refusal_response
from server.observability import COST, THROTTLED
from server.settings import Settings
from store import Store

MINIMUM = REFUSED_COST
"""What a refused request, and a 304, cost: the least any request costs (none is free)."""
TYPES = published_types(schema)
"""The schema as its SDL publishes it, directives and all: what prices are computed from."""


def client_of(request: HTTPConnection, identity: Identity | None) -> str:
    """Who the request comes from, as its budget is named: its key, or its client's address."""
    if identity is not None:
        return f"key:{identity.name}"
    return f"address:{request.client.host if request.client else 'unknown'}"


@cache
def _parsed(document: str) -> DocumentNode:
    return parse(document)


@dataclass(frozen=True)
class Charges:
    settings: Settings
    budgets: Budgets
    store: Store  # where API keys are looked up

    async def caller(self, request: Request) -> tuple[Identity | None, Meter]:
        """Who sent a GraphQL request (`identify`) and the meter its operations are charged
        through (`meter`): asked once, as the request begins."""
        identity = await self.identify(request)
        return identity, self.meter(request, identity)

    async def identify(self, request: Request) -> Identity | None:
        """The request's API key, if it has one (refused if bad, or if one is needed)."""
        return await self.identify_connection(request, request.headers.get("authorization"))

    async def identify_connection(
        self, connection: HTTPConnection, authorization: str | None
    ) -> Identity | None:
        """The key `authorization` names (`Bearer <key>`), for a request or a WebSocket's
        `connection_init`: None for none (refused if bad, or if one is needed)."""
        if authorization is None:  # no key sent: nothing to look up
            identity = None
        else:
            identity = await authenticate(self.store, authorization)
        if identity is None and not self.settings.anonymous_access:
            raise InvalidCredentials(
                "This API needs an API key: send `Authorization: Bearer <key>`."
            )
        return identity

    def meter(self, request: HTTPConnection, identity: Identity | None) -> Meter:
        """What the schema prices and charges a GraphQL request's operations through: its
        bucket and policy found once, as it is made."""
        return Meter(
            price=self.price_operation,
            check=self.check_operation,
            pay=partial(self.pour, client_of(request, identity), self.policy_of(identity)),
            minimum=MINIMUM,
        )

    def price_operation(
        self, document: DocumentNode, operation_name: str | None, variables: dict[str, Any] | None
    ) -> int:
        """What the operation costs (request_limits.cost), at least the minimum."""
        return max(MINIMUM, query_cost(TYPES, document, operation_name, variables, LIST_SIZES))

    def check_operation(self, cost: int) -> None:
        """An operation over the most one request may cost is refused before it runs."""
        if cost > (maximum := self.settings.max_query_cost):
            raise ApiError(
                f"The query costs {cost} points; the most a request may cost is {maximum}. "
                "Ask for fewer items (`first`) or fewer fields.",
                code=ErrorCode.MAX_COST_EXCEEDED,
                details={"cost": cost, "maximumCost": maximum},
            )

    def price_download(self, document: str, variables: dict[str, Any]) -> int:
        """What a download costs: what its document (a query a client could send) costs for
        the rows it holds."""
        return query_cost(TYPES, _parsed(document), None, variables, LIST_SIZES)

    def price_export(self, items: int) -> int:
        """What the export costs: 1, and a point an item (each an object)."""
        return 1 + items

    async def charge(
        self, request: HTTPConnection, identity: Identity | None, cost: int
    ) -> Allowance:
        """Pours `cost` into the client's bucket."""
        return await self.pour(client_of(request, identity), self.policy_of(identity), cost)

    async def pour(self, bucket: str, policy: BucketPolicy, cost: int) -> Allowance:
        """Pours `cost` into `bucket`: the one place any budget is drawn on."""
        allowance = await self.budgets.take(bucket, cost, policy)
        if allowance.allowed:
            COST.inc(cost)
        else:
            THROTTLED.inc()
        return allowance

    def policy_of(self, identity: Identity | None) -> BucketPolicy:
        """The budget of the client `identity` names (None: anonymous)."""
        if identity is None:
            return self.anonymous_policy
        return self.key_policy if identity.budget is None else self.within_maximum(identity.budget)

    # The settings' policies, made once (not for each request).
    @cached_property
    def anonymous_policy(self) -> BucketPolicy:
        return self.settings.anonymous_budget

    @cached_property
    def key_policy(self) -> BucketPolicy:
        return self.within_maximum(self.settings.key_budget)

    def within_maximum(self, policy: BucketPolicy) -> BucketPolicy:
        if policy.capacity < self.settings.max_query_cost:
            # A key's budget set below a maximum raised since: every allowed request must fit
            # the bucket, or the client would be told to retry in vain.
            return replace(policy, capacity=self.settings.max_query_cost)
        return policy

    async def unpriced(self, meter: Meter) -> ApiError | None:
        """A GraphQL operation refused before it was priced costs the minimum (paid now, or
        with its batch); the throttle's refusal if even that does not fit."""
        return await self._add(meter, MINIMUM)

    async def settle_kept(
        self, meter: Meter, cost: int
    ) -> tuple[ApiError | None, dict[str, Any], dict[str, str]]:
        """A kept answer's settlement: it costs its operation's cost, as if it ran (paid now,
        or with its batch); the throttle's refusal if that did not fit, its cost report
        (`extensions.cost`) and the budget's headers, together (the bucket's report is the
        allowance's own: request_limits)."""
        throttled = await self._add(meter, cost)
        allowance = meter.allowance
        return throttled, self.cost_report(cost, allowance), self.headers(allowance)

    async def _add(self, meter: Meter, cost: int) -> ApiError | None:
        meter.costs.append(cost)
        if meter.mode is not MeterMode.PAY:
            return None
        # Paid through the meter's own `pay` (this module's `pour`), noted as `Meter.charge`
        # notes it: from here, not through the schema's layer and back.
        allowance = meter.allowance = await meter.pay(cost)
        return None if allowance.allowed else throttled_error(cost, allowance)

    def check_batch_size(self, size: int) -> None:
        """A batch of more operations than allowed is refused before any is priced."""
        if size > self.settings.max_batch:
            raise ApiError(
                f"The batch holds {size} operations; the most allowed is "
                f"{self.settings.max_batch}.",
                code=ErrorCode.BATCH_TOO_LARGE,
            )

    async def pay_batch(self, meter: Meter) -> list[int] | None:
        """A batch, its operations priced (`meter.costs`), is paid for whole, once, before any
        of them runs (over the maximum it is refused); then its operations run prepaid. The
        operations' costs if the budget cannot pay for them."""
        if (total := sum(meter.costs)) > self.settings.max_query_cost:
            raise ApiError(
                f"The batch costs {total} points together; the most one request may cost "
                f"is {self.settings.max_query_cost}.",
                code=ErrorCode.MAX_COST_EXCEEDED,
            )
        costs, meter.costs, meter.mode = meter.costs, [], MeterMode.PREPAID
        return None if (await meter.charge(total)).allowed else costs

    async def settle(
        self, meter: Meter, priced: int, result: ExecutionResult, variables: dict[str, Any] | None
    ) -> ExecutionResult:
        """A GraphQL operation's result as the client gets it: charged (the minimum if it was
        refused before it was priced), its errors as the client sees them, its cost reported."""
        if len(meter.costs) == priced and (throttled := await self.unpriced(meter)):
            result = ExecutionResult(data=None, errors=[throttled.as_graphql_error()])
        result.errors = [client_facing(error, variables) for error in result.errors or []] or None
        result.extensions = {"cost": self.cost_report(meter.costs[-1], meter.allowance)}
        return result

    def throttled(self, meter: Meter, cost: int) -> ExecutionResult:
        """A batch's operation, its batch refused for the budget."""
        assert meter.allowance is not None
        error = throttled_error(cost, meter.allowance)
        extensions = {"cost": self.cost_report(cost, meter.allowance)}
        return ExecutionResult(data=None, errors=[error.as_graphql_error()], extensions=extensions)

    async def refused(
        self, request: Request, identity: Identity | None, refusal: ApiError
    ) -> Response:
        """A request refused over HTTP pays the minimum (or is throttled, if even that does not
        fit), and says so."""
        allowance = await self.charge(request, identity, MINIMUM)
        if not allowance.allowed:
            refusal = throttled_error(MINIMUM, allowance)
        return self.refusal(refusal, MINIMUM, allowance)

    def refusal(self, refusal: ApiError, cost: int, allowance: Allowance) -> Response:
        """The response of a refused HTTP request (a throttled download, say), with its report."""
        return refusal_response(
            refusal, {"cost": self.cost_report(cost, allowance)}, self.headers(allowance, cost)
        )

    async def not_modified(
        self, request: Request, identity: Identity | None, headers: dict[str, str]
    ) -> Response:
        """A 304: the client holds the answer already, and pays the minimum for being told."""
        allowance = await self.charge(request, identity, MINIMUM)
        if not allowance.allowed:
            return self.refusal(throttled_error(MINIMUM, allowance), MINIMUM, allowance)
        return Response(status_code=304, headers={**headers, **self.headers(allowance, MINIMUM)})

    def cost_report(self, cost: int, allowance: Allowance | None) -> dict[str, Any]:
        """What `extensions.cost` says of a request: what it was charged (`charged`)."""
        return cost_report(cost, self.settings.max_query_cost, allowance)

    def headers(self, allowance: Allowance | None, cost: int | None = None) -> dict[str, str]:
        """The budget's headers (`RateLimit-*`); `cost`, if given, as `Almanac-Cost` (what a
        download or the export was charged). A throttled request's `Retry-After` comes with its
        refusal (request_limits.throttled_error)."""
        if allowance is None:
            return {}
        headers = allowance.headers()
        if cost is not None:
            headers["almanac-cost"] = str(charged(cost, allowance))
        return headers
