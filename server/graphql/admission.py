"""The one admission path: every GraphQL operation, whatever carries it (a POST, a GET, a batch's
operation, a persisted one, a WebSocket's `subscribe`, an SSE request), is admitted by `Gate`,
in this order, before the store is read for it or anything of it runs:

1. size: its text within the body limit (a WebSocket message is held to it as it arrives, by
   Uvicorn's `ws_max_size` and by server.graphql.subscriptions.protocols.TextWebSocketAdapter);
2. its text: the one sent, or the persisted one its id names; with trusted documents only
   theirs, admin keys excepted (`OperationText`; server.graphql.persisted is asked only when
   the request names a document or trusted documents are on). A text is found before it is
   parsed: an id names a text, and a text not trusted is refused unparsed;
3. parsed within the token limit, once per text (schema.known_document: the pipeline's
   DocumentChecks then finds it parsed);
4. the operation the spec's GetOperation selects, of a kind its transport carries;
5. the caller: its key, identified as the request or the connection began, and for a
   connection checked again (revoked since?);
6. over HTTP, its minimum change (read-your-writes, server.min_change): asked for, or
   the caller's own last change here, applied in this process before anything is read for it,
   the warm path included (`fresh_enough`), waited for within the request's deadline;
then, at the pipeline's first hooks and before any resolver, the same for every transport:
7. the document limits, as validation rules beside the spec's (DocumentChecks);
8. the price and 9. the charge (Metering, through the request's Meter: server.charges). They
   are hooks of the pipeline because a batch prices every operation before any is paid.
A refusal at any step costs the minimum (server.charges.MINIMUM), on every transport: HTTP
settles it with the answer (server.charges.Charges.settle), streams here (`refused`, `paid`).
The transports (server.graphql.view for HTTP and SSE, server.graphql.subscriptions.protocols for
WebSockets)
only adapt their input and output to it.
"""

import contextlib
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any

from graphql import OperationType
from strawberry.http import GraphQLRequestData
from strawberry.types.execution import PreExecutionError

from api_errors import ApiError, ErrorCode
from request_limits import selected_operation
from schema import (
    Admitted,
    Context,
    Identity,
    OperationKey,
    known_document,
    operation_key,
    parsed_or_refused,
)
from server.charges import Charges
from server.graphql.persisted import DOCUMENT_ID, PersistedQueries
from server.graphql.services import SharedServices
from server.min_change import EXTENSION, OwnChanges, operation_minimum, reached
from server.observability import PERSISTED_QUERIES
from server.settings import Settings

Carried = frozenset[OperationType]
QUERIES: Carried = frozenset({OperationType.QUERY})
"""What a GET carries."""
QUERIES_AND_MUTATIONS: Carried = frozenset({OperationType.QUERY, OperationType.MUTATION})
"""What a POST answered with one response carries."""
SUBSCRIPTIONS: Carried = frozenset({OperationType.SUBSCRIPTION})
"""What a stream carries: a WebSocket's operations, an SSE request."""


def text_over(limit: int, text: str) -> bool:
    """Whether `text` is over `limit` bytes in UTF-8: counted in characters first (a character
    is one to four bytes), so a text that surely fits is not encoded to be measured."""
    if len(text) > limit:
        return True
    return len(text) * 4 > limit and len(text.encode()) > limit


@dataclass(frozen=True)
class Operation:
    """An operation admitted so far (steps 1, 2 and 6): its text, its key (the text, name and
    variables: what its answer is kept under) and the change its answer must reflect."""

    text: str
    key: OperationKey
    min_change: int | None = None


@dataclass(frozen=True)
class OperationText:
    persisted: PersistedQueries

    async def find(self, identity: Identity | None, data: GraphQLRequestData) -> str:
        """The operation's text: sent, or persisted (or refused). A text sent alone, with no
        trusted documents to hold it to, is the text: nothing to look up."""
        extensions = data.extensions
        if (
            data.query is not None
            and self.persisted.trusted is None
            and (
                extensions is None
                or not ("persistedQuery" in extensions or DOCUMENT_ID in extensions)
            )
        ):
            return data.query
        try:
            text, found = await self.persisted.document_text(
                data.query, extensions, may_run_any=identity is not None and identity.is_admin
            )
        except ApiError as refusal:
            if refusal.code == ErrorCode.PERSISTED_QUERY_NOT_FOUND:
                PERSISTED_QUERIES.labels("miss").inc()
            raise
        if found in ("hit", "registered"):
            PERSISTED_QUERIES.labels(found).inc()
        return text


class NotCarried(ApiError):
    """An operation of a kind its transport does not carry: it refuses the whole request."""


def not_carried(carried: Carried, kind: OperationType) -> NotCarried:
    if kind is OperationType.SUBSCRIPTION:
        return NotCarried(
            "Subscriptions are sent over a WebSocket (graphql-transport-ws) or as a POST asking "
            "for text/event-stream (GraphQL over SSE).",
            code=ErrorCode.BAD_REQUEST,
        )
    if carried == SUBSCRIPTIONS:
        return NotCarried(
            "Only subscriptions are sent over WebSockets and SSE: send queries and mutations "
            "as HTTP requests to /graphql.",
            code=ErrorCode.BAD_REQUEST,
        )
    return NotCarried("Mutations must be sent with POST; GET carries queries only.", status=405)


class Gate:
    """The admission sequence (steps 1 to 6 here; see the module's docstring), one per app."""

    def __init__(self, settings: Settings, services: SharedServices, charges: Charges) -> None:
        self.settings, self.services, self.charges = settings, services, charges
        self.texts = OperationText(services.persisted)
        self.own = OwnChanges()
        """The last change each key made through this process: its own writes, read back."""

    async def text(self, identity: Identity | None, data: GraphQLRequestData) -> Operation:
        """Steps 1 and 2: the operation's text, within the size limit, sent or persisted (and
        trusted), and its key. All the warm path (a kept answer) needs of it: its text was
        admitted whole before."""
        if data.query is not None and text_over(self.settings.max_body_bytes, data.query):
            raise ApiError(
                f"The document is longer than {self.settings.max_body_bytes} bytes, the most "
                "this API accepts.",
                code=ErrorCode.PAYLOAD_TOO_LARGE,
                status=413,
            )
        text = await self.texts.find(identity, data)
        return Operation(text, operation_key(text, data.operation_name, data.variables))

    async def operation(
        self,
        identity: Identity | None,
        data: GraphQLRequestData,
        asked: int | None,
        deadline: float | None,
        *,
        wait: bool = True,
    ) -> Operation:
        """Steps 1, 2 and 6: the operation's text and key (`text`), and its minimum change, the
        latest of what the request asks (`asked`: its `Almanac-Min-Change`), what the
        operation asks (its `extensions.minChange`) and the caller's own last change here,
        applied in this process by `deadline`; without `wait` (a batch being priced), only
        checked. Nothing is decoded or waited for unless one of them is asked."""
        found = await self.text(identity, data)
        minimum = asked or None
        if data.extensions is not None and data.extensions.get(EXTENSION) is not None:
            minimum = max(minimum or 0, operation_minimum(data.extensions) or 0) or None
        if identity is not None and (own := self.own.of(identity.name)):
            minimum = max(minimum or 0, own)
        if minimum is not None and wait:
            await reached(self.services.store, minimum, deadline)
        return Operation(found.text, found.key, minimum)

    def made(self, context: Context, sequence: int) -> None:
        """Note the change the caller's operation made: what it reads next reflects it."""
        if context.identity is not None:
            self.own.note(context.identity.name, sequence)

    def parsed(
        self, context: Context, data: GraphQLRequestData, text: str, carried: Carried
    ) -> None:
        """Steps 3 and 4: the text parsed (once per text) and the operation selected in it
        (once per operation), of a kind its transport carries: `Context.admitted`, where the
        pipeline's hooks find them (or `ApiError`, or the parser's `GraphQLError`)."""
        known = known_document(self.services.graphql, text)
        document = parsed_or_refused(known)
        definition = selected_operation(document, data.operation_name)
        if definition.operation not in carried:
            raise not_carried(carried, definition.operation)
        context.admitted = Admitted(known, document, definition)

    async def admit(
        self,
        context: Context,
        data: GraphQLRequestData,
        carried: Carried,
        authorization: str | None = None,
    ) -> str:
        """Steps 1 to 5: the text to run, admitted (or `ApiError`, or the parser's
        `GraphQLError`). `authorization` is a connection's key, checked again here; a
        request's was checked as it began."""
        admitted = await self.text(context.identity, data)
        text, context.operation = admitted.text, admitted.key
        context.admitted, context.answered = None, None  # not yet: parsed below
        self.parsed(context, data, text, carried)
        if authorization is not None and (
            revoked := await self.caller_refused(context, authorization)
        ):
            raise revoked
        return text

    async def caller_refused(self, context: Context, authorization: str | None) -> ApiError | None:
        """Why a connection's key no longer admits it (revoked, say); None if it still does."""
        try:
            await self.charges.identify_connection(context.connection, authorization)
        except ApiError as refusal:
            return refusal
        return None

    async def refused(self, context: Context) -> ApiError | None:
        """A stream's operation refused: the minimum paid (the throttle's refusal instead, if
        even that does not fit)."""
        assert context.meter is not None  # every transport's context is metered
        return await self.charges.unpriced(context.meter)

    async def paid(
        self, context: Context, results: AsyncGenerator[Any, None]
    ) -> AsyncGenerator[Any, None]:
        """A stream's results; a first one that comes before anything was charged is a
        refusal (by the pipeline's hooks: validation, the price over the maximum; or for the
        caller's open subscriptions): it pays the minimum, as every refusal does, and comes as
        a `PreExecutionError`, which the transports send as the refusal of the operation."""
        assert context.meter is not None
        first = True
        async with contextlib.aclosing(results):
            async for result in results:
                if first and not context.meter.costs:
                    await self.refused(context)
                    result = PreExecutionError(data=None, errors=result.errors)
                first = False
                yield result
