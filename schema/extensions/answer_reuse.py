"""Reusing answers: a repeated query costs no execution until the data it read changes.

An answer's `data` is kept, encoded, under the exact operation (document text, operation name,
variables), with the store's data version when its computation began and the subjects it read
(store.reads): a change retires exactly the answers that read something it touched, and an
answer whose reads changed while it was computed is stale from the start. Only successful
query answers are kept (`KeepAnswers`), in a cache bounded by the bytes it holds, and never one
of the caller's own (its budget, its webhooks: schema.caller.per_caller), wherever the operation
selects it: another caller sending the same text must not receive it. The HTTP layer answers a
repeated operation from it (`kept_answer`) before it would run the pipeline again: the answer
was computed by the pipeline, from the same text and variables, under the same rules, on data
unchanged where it read. A kept answer is handed on as an `orjson.Fragment`: its JSON is
written as it is.

A retired answer stays kept until it is computed again (ahead of its readers:
server.graphql.refresh): until then, for at most a bound past the first change it misses
(schema.extensions.staleness), a reader may be given it, marked stale (`answer_within`).
"""

from collections.abc import Iterator

import orjson
from strawberry.extensions import SchemaExtension
from strawberry.types import ExecutionContext
from strawberry.types.graphql import OperationType

from schema.caller import selects_callers_own
from schema.extensions.metering import published_types
from schema.extensions.services import (
    Admitted,
    Answered,
    CachedAnswer,
    OperationKey,
    Services,
    state_of,
)
from schema.json import digest, encode_json
from store import DataVersion


def kept_answer(services: Services, key: OperationKey, data: DataVersion) -> CachedAnswer | None:
    """The answer kept for this operation, if nothing it read has changed since (never stale)."""
    found = answer_within(services, key, data, bound=0, min_change=None)
    return None if found is None else found[0]


def answer_within(
    services: Services,
    key: OperationKey,
    data: DataVersion,
    bound: float,
    min_change: int | None,
) -> tuple[CachedAnswer, float | None] | None:
    """The answer kept for this operation, and how long it has been stale: fresh (None: nothing
    it read changed since), or stale for at most `bound` seconds past the first change it misses,
    and reflecting at least `min_change` (the change a caller asked to see, if any). A kept answer
    is never a caller's own (`KeepAnswers`): any caller may be given it."""
    kept = services.answers.get(key) if services.answers is not None else None
    if kept is None:
        return None
    staleness = services.staleness
    staleness.asked(kept)
    if data.unchanged_since(kept.version, kept.reads):
        return kept, None
    if not data.known or (min_change is not None and kept.reflects < min_change):
        return None
    stale = staleness.stale_for(kept)
    if stale is None or bound <= 0 or stale > bound:
        return None
    return kept, stale


class KeepAnswers(SchemaExtension):
    def on_execute(self) -> Iterator[None]:
        context = self.execution_context
        almanac = state_of(context)
        if almanac is None or almanac.services is None or almanac.admitted is None:
            yield
            return
        services, admitted, key = almanac.services, almanac.admitted, almanac.operation
        assert key is not None  # admitted with it
        data = almanac.store.version
        version, reflects, began = data.current, data.applied_through, services.staleness.clock()
        yield
        if context.operation_type is not OperationType.QUERY:
            return
        almanac.answered = Answered(reflects)
        if _callers_own(context, services, key, admitted):
            almanac.own = True  # Nor shared by a cache (server.graphql.response).
            return  # The caller's own: no other request's answer.
        result = context.result
        if services.answers is None or version is None:
            return
        if result is None or result.errors or result.data is None:
            return
        reads = services.staleness.interned(frozenset(almanac.read))  # shared with its likes
        encoded = encode_json(result.data)
        # Stale from the start if what it read changed while it was computed.
        stale = None if data.unchanged_since(version, reads) else began
        kept = CachedAnswer(
            version, encoded, digest(encoded), context.operation_name, reads, reflects, stale
        )
        services.answers.watched(key, kept)
        result.data = orjson.Fragment(encoded)  # type: ignore[assignment]  # Encoded: written as is.


def _callers_own(
    context: ExecutionContext, services: Services, key: OperationKey, admitted: Admitted
) -> bool:
    """Whether the operation answers with the caller's own: found once per document and
    operation, and kept with the document (`KnownDocument.own`). A dry run's document (its
    `rateLimit` alone: schema.extensions.metering) is the caller's own as the whole is."""
    known = admitted.known
    if (own := known.own.get(key[1])) is not None:
        return own
    types = published_types(context.schema)
    own = selects_callers_own(types, admitted.document, admitted.definition)
    known.own[key[1]] = own
    return own
