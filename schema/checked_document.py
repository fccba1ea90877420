"""Running the document the HTTP layer has already parsed and checked (see request_limits/)."""

from collections.abc import Iterator

from strawberry.extensions import SchemaExtension


class CheckedDocument(SchemaExtension):
    """Skips parsing and validation when the context carries a checked document."""

    def on_parse(self) -> Iterator[None]:
        document = getattr(self.execution_context.context, "document", None)
        if document is not None:
            self.execution_context.graphql_document = document
        yield

    def on_validate(self) -> Iterator[None]:
        if getattr(self.execution_context.context, "document", None) is not None:
            self.execution_context.pre_execution_errors = []
        yield
