"""The GraphQL schema: Strawberry types over the store's documents and the resolvers' rules."""

import logging

import strawberry
from graphql import GraphQLError
from strawberry.schema.config import StrawberryConfig
from strawberry.types.execution import ExecutionContext

from schema.checked_document import CheckedDocument
from schema.context import Context, Identity, new_context
from schema.errors import is_unexpected
from schema.mutation import Mutation
from schema.query import Query
from schema.scalars import SCALARS

__all__ = ["Context", "Identity", "new_context", "schema"]

log = logging.getLogger("almanac.errors")


class AlmanacSchema(strawberry.Schema):
    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        # Client errors are the client's business; only our own failures reach the log.
        for error in errors:
            if is_unexpected(error):
                log.error("Resolver failed at %s", error.path, exc_info=error.original_error)


schema = AlmanacSchema(
    query=Query,
    mutation=Mutation,
    config=StrawberryConfig(scalar_map=SCALARS),
    extensions=[CheckedDocument],
)
