"""Each operation priced and paid for before it runs, through the request's `Meter`.

The price is the meter's (server.charges computes it from the schema's own SDL: see
request_limits.cost), kept once per document, operation and variables; one that may not run
(over the maximum) is refused. How the operation is then paid for is the meter's mode: paid now,
priced only (a batch, before it runs), or already paid (a batch, as it runs). A change that no
key may make is refused before it is priced; an operation refused unpriced pays the minimum
(server.charges).
"""

from collections.abc import AsyncIterator
from functools import cache

from graphql import (
    BooleanValueNode,
    DocumentNode,
    FieldNode,
    GraphQLSchema,
    OperationDefinitionNode,
    OperationType,
    SelectionSetNode,
    VariableNode,
    build_schema,
)
from strawberry.extensions import SchemaExtension
from strawberry.schema.base import BaseSchema
from strawberry.types import ExecutionResult

from request_limits import ListSizes, throttled_error
from schema.caller import KEY_OWNED_MUTATIONS, admin_of, key_of
from schema.extensions.services import MeterMode, state_of
from schema.vocabulary import MAX_LIST_SLICE, MAX_PAGE_SIZE

LIST_SIZES = ListSizes(max_slice=MAX_LIST_SLICE, max_page=MAX_PAGE_SIZE)


RATE_LIMIT = "rateLimit"
"""The root field that reports the caller's budget, and with `dryRun: true` prices a request
without running it (schema.types.budget)."""


@cache
def published_types(schema: BaseSchema) -> GraphQLSchema:
    """The schema as its SDL publishes it: what costs are computed from."""
    return build_schema(schema.as_str())


class Metering(SchemaExtension):
    async def on_execute(self) -> AsyncIterator[None]:
        context = self.execution_context
        almanac = state_of(context)
        if almanac is None or almanac.admitted is None or almanac.operation is None:
            yield  # run directly (the CLI, a test): unmetered
            return
        services, meter, key = almanac.services, almanac.meter, almanac.operation
        if services is None or meter is None:
            yield
            return
        document = context.graphql_document
        assert document is not None
        operation = almanac.admitted.definition  # selected once, by the gate
        if operation.operation is OperationType.MUTATION:
            # A change no key may make is refused unpriced; any key manages its own webhooks.
            fields = [s for s in operation.selection_set.selections if isinstance(s, FieldNode)]
            own = len(fields) == len(operation.selection_set.selections) and all(
                field.name.value in KEY_OWNED_MUTATIONS for field in fields
            )
            (key_of if own else admin_of)(almanac.identity)
        if (cost := services.costs.get(key)) is None:
            cost = meter.price(document, key[1], context.variables)
            services.costs.put(key, cost)  # A refusal repeated is not priced again either.
        meter.check(cost)
        meter.priced = cost
        rate_limits = rate_limit_fields(operation)
        if operation is not None and asks_dry_run(rate_limits, context.variables):
            # Priced and checked: only `rateLimit` runs, and the request is charged the least
            # any request is (none is free), not its cost.
            context.graphql_document = only(document, operation, rate_limits)
            cost = meter.minimum
        meter.costs.append(cost)
        if meter.mode is MeterMode.PAY:
            allowance = await meter.charge(cost)
            if not allowance.allowed:
                raise throttled_error(cost, allowance)
        if meter.mode is MeterMode.PRICE:
            context.result = ExecutionResult(data=None, errors=None)  # Priced: it does not run.
        yield


def rate_limit_fields(operation: OperationDefinitionNode | None) -> list[FieldNode]:
    """The operation's root `rateLimit` fields."""
    return root_fields(operation, {RATE_LIMIT})


def root_fields(operation: OperationDefinitionNode | None, names: set[str]) -> list[FieldNode]:
    """The operation's root fields of these names."""
    if operation is None:
        return []
    return [
        selection
        for selection in operation.selection_set.selections
        if isinstance(selection, FieldNode) and selection.name.value in names
    ]


def only(
    document: DocumentNode, operation: OperationDefinitionNode, fields: list[FieldNode]
) -> DocumentNode:
    """The document with `operation` asking for these root fields alone."""
    kept = OperationDefinitionNode(
        operation=operation.operation,
        name=operation.name,
        variable_definitions=operation.variable_definitions,
        directives=operation.directives,
        selection_set=SelectionSetNode(selections=tuple(fields)),
    )
    return DocumentNode(
        definitions=tuple(kept if d is operation else d for d in document.definitions)
    )


def asks_dry_run(fields: list[FieldNode], variables: dict[str, object] | None) -> bool:
    """Whether one of these `rateLimit` fields says `dryRun: true`."""
    for field in fields:
        for argument in field.arguments or ():
            value = argument.value
            if argument.name.value != "dryRun":
                continue
            if isinstance(value, BooleanValueNode) and value.value:
                return True
            if isinstance(value, VariableNode) and (variables or {}).get(value.name.value) is True:
                return True
    return False
