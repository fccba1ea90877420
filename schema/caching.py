"""Telling the HTTP layer whether an answer may be reused."""

from collections.abc import Iterator

from strawberry.extensions import SchemaExtension
from strawberry.types.graphql import OperationType


class MarkReusable(SchemaExtension):
    """Marks the request's context reusable when it was a query answered without errors.

    A mutation's answer, or one with errors (a resolver may fail only this once), is not.
    """

    def on_operation(self) -> Iterator[None]:
        yield
        context = self.execution_context.context
        result = self.execution_context.result
        context.reusable = (
            result is not None
            and not result.errors
            and self.execution_context.operation_type is OperationType.QUERY
        )
