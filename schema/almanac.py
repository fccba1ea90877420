"""The schema itself: the root types, the scalars, and the almanac's extensions in their order."""

import logging

import strawberry
from graphql import GraphQLError
from strawberry.extensions import SchemaExtension
from strawberry.schema.config import StrawberryConfig
from strawberry.schema.name_converter import NameConverter
from strawberry.types.execution import ExecutionContext

from api_errors import is_unexpected
from schema.completion import ReusingCompletions
from schema.extensions.answer_reuse import KeepAnswers
from schema.extensions.document_checks import DocumentChecks
from schema.extensions.masking import MaskUnexpectedErrors
from schema.extensions.metering import Metering
from schema.mutation import Mutation
from schema.query import Query
from schema.subscription import Subscription
from schema.vocabulary import SCALARS

log = logging.getLogger("almanac.errors")


class NamesOnce(NameConverter):
    """Strawberry's names, each worked out once: it converts every argument's name again on
    every resolution (a catalog page's 200 leaders each convert `as_of` to `asOf`)."""

    def __init__(self) -> None:
        super().__init__()
        self.names: dict[str, str] = {}

    def apply_naming_config(self, name: str) -> str:
        found = self.names.get(name)
        if found is None:
            found = self.names[name] = super().apply_naming_config(name)
        return found


class AlmanacSchema(strawberry.Schema):
    def get_extensions(self, sync: bool = False) -> list[SchemaExtension]:
        # The document checks validate under every rule other extensions add: they come last.
        extensions = super().get_extensions(sync)
        checks = [extension for extension in extensions if isinstance(extension, DocumentChecks)]
        return [e for e in extensions if not isinstance(e, DocumentChecks)] + checks

    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        # Client errors are the client's business; only our own failures reach the log.
        for error in errors:
            if is_unexpected(error):
                log.error("Resolver failed at %s", error.path, exc_info=error.original_error)


def almanac_schema(*observers: type[SchemaExtension]) -> AlmanacSchema:
    """The schema, with `observers` (tracing) around the almanac's own extensions."""
    return AlmanacSchema(
        query=Query,
        mutation=Mutation,
        subscription=Subscription,
        config=StrawberryConfig(scalar_map=SCALARS, name_converter=NamesOnce()),
        # An operation is paid for (or throttled) before it runs and its answer is kept.
        extensions=[*observers, Metering, KeepAnswers, MaskUnexpectedErrors, DocumentChecks],
        execution_context_class=ReusingCompletions,
    )


schema = almanac_schema()
