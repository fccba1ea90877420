"""Reusing answers: a repeated query costs no execution until the data it read changes.

An answer's `data` is kept, encoded, under the exact operation (document text, operation name,
variables), with the store's data version when its computation began and the subjects it read
(store.reads): a change retires exactly the answers that read something it touched, and an
answer whose reads changed while it was computed is stale from the start. Only successful
query answers are kept (`KeepAnswers`), in a cache bounded by the bytes it holds. The HTTP
layer answers a repeated operation from it (`kept_answer`) before it would run the pipeline
again: the answer was computed by the pipeline, from the same text and variables, under the
same rules, on data unchanged where it read. A kept answer is handed on as an
`orjson.Fragment`: its JSON is written as it is.
"""

from collections.abc import Iterator

import orjson
from strawberry.extensions import SchemaExtension
from strawberry.types.graphql import OperationType

from request_limits import selected_operation
from schema.extensions.metering import root_fields
from schema.extensions.services import (
    CachedAnswer,
    OperationKey,
    Services,
    operation_of,
    services_of,
)
from schema.json import digest, encode_json
from store import DataVersion

PER_CALLER = {"rateLimit", "webhooks"}
"""Root fields whose answer is the caller's own (its budget, its webhooks): never kept."""


def kept_answer(services: Services, key: OperationKey, data: DataVersion) -> CachedAnswer | None:
    """The answer kept for this operation, if nothing it read has changed since."""
    kept = services.answers.get(key) if services.answers is not None else None
    if kept is None or not data.unchanged_since(kept.version, kept.reads):
        return None
    return kept


class KeepAnswers(SchemaExtension):
    def on_execute(self) -> Iterator[None]:
        context = self.execution_context
        services, key = services_of(context), operation_of(context)
        if services is None or services.answers is None or key is None:
            yield
            return
        version = context.context.store.version.current
        yield
        result = context.result
        if context.operation_type is not OperationType.QUERY or version is None:
            return
        document = context.graphql_document
        if document and root_fields(selected_operation(document, key[1]), PER_CALLER):
            return  # It answers with the caller's own: no other request's answer.
        if result is None or result.errors or result.data is None:
            return
        data = encode_json(result.data)
        reads = frozenset(context.context.read)
        kept = CachedAnswer(version, data, digest(data), context.operation_name, reads)
        services.answers.put(key, kept)
        result.data = orjson.Fragment(data)  # type: ignore[assignment]  # Encoded: written as is.
