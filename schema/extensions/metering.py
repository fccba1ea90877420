"""Query cost, computed before an operation runs and charged to the client's budget.

The cost (request_limits.cost) is computed from the schema's own SDL, once per document,
operation and variables; an operation over the maximum is refused. How the operation is then
charged is the request's `Meter`'s mode: paid now, priced only (a batch, before it runs), or
already paid (a batch, as it runs). An operation refused before it is priced is charged by the
HTTP layer, which also reports each operation's cost in `extensions.cost`.
"""

from collections.abc import AsyncIterator
from functools import cache

from graphql import GraphQLSchema, build_schema
from strawberry.extensions import SchemaExtension
from strawberry.schema.base import BaseSchema
from strawberry.types import ExecutionResult

from api_errors import ApiError, ErrorCode
from editing.inputs import MAX_CATEGORIES, MAX_MODEL_CARD_REPORTS, MAX_TRACKS
from request_limits.cost import REFUSED_COST, ListSizes, query_cost
from schema.extensions.services import MeterMode, Services, operation_of, services_of
from schema.pagination import MAX_LIST_SLICE, MAX_PAGE_SIZE

LIST_SIZES = ListSizes(
    bounded={
        ("Query", "categories"): MAX_CATEGORIES,
        ("Benchmark", "tracks"): MAX_TRACKS,
        ("ModelCardReports", "nodes"): MAX_MODEL_CARD_REPORTS,
    },
    max_slice=MAX_LIST_SLICE,
    max_page=MAX_PAGE_SIZE,
)


@cache
def published_types(schema: BaseSchema) -> GraphQLSchema:
    """The schema as its SDL publishes it: what costs are computed from."""
    return build_schema(schema.as_str())


class Metering(SchemaExtension):
    async def on_execute(self) -> AsyncIterator[None]:
        context = self.execution_context
        services = services_of(context)
        meter = getattr(context.context, "meter", None)
        if services is None or meter is None or operation_of(context) is None:
            yield
            return
        cost = max(REFUSED_COST, self.cost(services))
        meter.costs.append(cost)
        if meter.mode is MeterMode.PAY:
            allowance = await meter.charge(cost)
            if not allowance.allowed:
                raise ApiError(
                    f"This request costs {cost} points and {allowance.remaining} are left in "
                    f"your budget, which refills at {allowance.policy.restore_rate:g} points a "
                    f"second. Retry in {allowance.retry_after} seconds.",
                    code=ErrorCode.THROTTLED,
                    status=429,
                )
        if meter.mode is MeterMode.PRICE:
            context.result = ExecutionResult(data=None, errors=None)  # Priced: it does not run.
        yield

    def cost(self, services: Services) -> int:
        context = self.execution_context
        key = operation_of(context)
        assert key is not None
        if (cost := services.costs.get(key)) is None:
            assert context.graphql_document is not None
            cost = query_cost(
                published_types(context.schema),
                context.graphql_document,
                key[1],
                context.variables,
                LIST_SIZES,
            )
            services.costs.put(key, cost)
        if cost > services.max_query_cost:
            maximum = services.max_query_cost
            raise ApiError(
                f"The query costs {cost} points; the most a request may cost is {maximum}. "
                "Ask for fewer items (`first`) or fewer fields.",
                code=ErrorCode.MAX_COST_EXCEEDED,
                details={"cost": cost, "maximumCost": maximum},
            )
        return cost
