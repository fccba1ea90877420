"""`/graphql`: Strawberry's ASGI view, with what GraphQL over HTTP needs beyond it.

A GraphQL request over HTTP takes one path (`respond`), each collaborator asked once: the
request read within its size limit (server.graphql.request) → its record (server.exchange),
the caller and its meter (server.charges) → each operation (`answer`): admitted by the gate
(server.graphql.admission: its text, sent or persisted, and trusted; its key; its minimum
change) → the answer kept for it on this data, found, held (a GET's 304) or served and paid
for in one call (server.graphql.operations: the one path of a kept answer, which needs no
context) → else a context made, its document parsed and its operation selected by the gate,
once (`Context.admitted`, where the pipeline's hooks find them), and Strawberry's pipeline
(`schema.execute`) with the schema's extensions, which price and charge it (server.charges,
where every charge is made) → one response (server.graphql.response), with each operation's
cost, and for a GET query an ETag. Strawberry's `run` serves what it adds to that: a
subscription over SSE (its hooks `get_context`, `parse_http_body`, `execute_operation`),
admitted by the same gate, then streamed; GraphiQL; WebSockets (see
server.graphql.subscriptions.protocols).
"""

import asyncio
from collections.abc import AsyncGenerator, Awaitable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, cast

import orjson
from cross_web import AsyncHTTPRequestAdapter, HTTPException, StarletteRequestAdapter
from graphql import GraphQLError
from starlette.datastructures import Headers
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response, StreamingResponse
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL
from strawberry.exceptions import ConnectionRejectionError
from strawberry.http import GraphQLHTTPResponse, GraphQLRequestData
from strawberry.http.streaming import SSETransport
from strawberry.subscriptions import GRAPHQL_SSE_PROTOCOL, GRAPHQL_TRANSPORT_WS_PROTOCOL
from strawberry.types import ExecutionResult, SubscriptionExecutionResult
from strawberry.types.graphql import OperationType
from strawberry.types.unset import UNSET, UnsetType

from api_errors import ApiError, ErrorCode
from schema import AlmanacSchema, Answered, Context, Identity, Meter, MeterMode, new_context, schema
from server.charges import Charges, client_of
from server.exchange import KEY as EXCHANGE_KEY
from server.exchange import Exchange, begin_exchange, exchange_of
from server.graphql.admission import (
    QUERIES,
    QUERIES_AND_MUTATIONS,
    SUBSCRIPTIONS,
    Gate,
    NotCarried,
    Operation,
)
from server.graphql.graphiql import graphiql_page
from server.graphql.operations import Kept, KeptLookup, Served
from server.graphql.refresh import Refresher
from server.graphql.request import (
    BodyTooLarge,
    body_limited,
    read_requests,
    response_media_type,
    too_large,
)
from server.graphql.response import (
    Outcome,
    http_response,
    refused,
    result_document,
    with_freshness,
)
from server.graphql.services import SharedServices
from server.graphql.subscriptions.protocols import (
    Subscriptions,
    TextWebSocketAdapter,
    TransportWSHandler,
    authorization_of,
)
from server.graphql.subscriptions.slow_subscribers import report_too_slow, stream_within
from server.http_caching import conditional
from server.min_change import CHANGE_CURSOR_EXTENSION, header_minimum
from server.min_change import HEADER as MIN_CHANGE_HEADER
from server.settings import Settings
from store import encode_change_cursor

SSE = SSETransport()
"""GraphQL over SSE (Strawberry's): what tells a request asking for a stream of events."""


class Held(Exception):
    """A GET whose client holds the kept answer already: its 304, out of Strawberry's `run`."""

    def __init__(self, response: Response) -> None:
        super().__init__("not modified")
        self.response = response


@dataclass
class Asked:
    """A GraphQL request over HTTP as it is answered: who sent it, the meter its operations are
    charged through, the change it asks to see, and (made only when an operation runs: a kept
    answer needs none) the operations' context."""

    request: Request
    exchange: Exchange
    identity: Identity | None
    meter: Meter
    minimum: int | None
    context: Context | None = None
    answered: Answered | None = None
    """How fresh the last operation's answer is (a query's)."""
    budget_headers: dict[str, str] = field(default_factory=dict)
    """The budget's headers, as the last operation's settlement left it."""


class AlmanacGraphQL(GraphQL[Context, None]):
    graphql_transport_ws_handler_class = TransportWSHandler
    websocket_adapter_class = TextWebSocketAdapter

    def __init__(
        self,
        settings: Settings,
        services: SharedServices,
        schema: AlmanacSchema = schema,
    ) -> None:
        # Subscriptions over graphql-transport-ws (a WebSocket on /graphql) and over SSE
        # (a POST asking for text/event-stream), Strawberry's own protocols.
        super().__init__(
            schema,
            allow_queries_via_get=True,
            multipart_uploads_enabled=True,  # importResults' files (server.graphql.multipart)
            subscription_protocols=(GRAPHQL_TRANSPORT_WS_PROTOCOL, GRAPHQL_SSE_PROTOCOL),
            connection_init_wait_timeout=timedelta(seconds=settings.websocket_init_timeout_seconds),
        )
        self.settings = settings
        self.services = services
        self.store = services.store
        self.charges = Charges(settings, services.budgets, services.store)
        self.gate = Gate(settings, services, self.charges)
        self.kept = KeptLookup(services.graphql, self.charges, services.store.version)
        self.refresher = Refresher(self.kept, self.gate, schema, self.store)  # run by the lifespan
        self.subscriptions = Subscriptions(
            per_key=settings.max_subscriptions_per_key,
            anonymous=settings.max_subscriptions_anonymous,
            send_timeout=settings.subscription_send_timeout_seconds,
            slots=services.slots,
            key_check_seconds=settings.subscription_key_check_seconds,
            idle_seconds=settings.websocket_idle_seconds,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":  # graphql-transport-ws: Strawberry's, as it is
            await super().__call__(scope, receive, send)
            return
        if scope["method"] == "HEAD":  # A GET without its body (the server sends none).
            scope = {**scope, "method": "GET"}
        accept = Headers(scope=scope).get("accept")
        # Asked first, so the view is not called back once the request is read: a stream
        # (SSE), or GraphiQL (only a GET accepting HTML may be its page).
        streamed = events_asked(accept)
        page = scope["method"] == "GET" and accept is not None and "text/html" in accept
        request = Request(scope)  # for a refusal; its body is read by `respond` or `run` only
        try:
            if streamed or (page and self.should_render_graphql_ide(request)):
                response = await self.by_strawberry(scope, receive)  # a stream (SSE), GraphiQL
            else:
                response = await self.respond(scope, receive, accept)
        except ApiError as refusal:
            response = await self.refused(request, refusal)
        except HTTPException as error:  # Strawberry's own refusals
            response = await self.refused(request, ApiError(error.reason, status=error.status_code))
        except BodyTooLarge:
            response = await self.refused(request, too_large(self.settings.max_body_bytes))
        except ClientDisconnect:
            return  # Gone (or let go for a body too slow): there is no one to answer.
        if isinstance(response, StreamingResponse):  # a subscription's events (SSE)
            seconds = self.subscriptions.send_timeout

            def too_slow() -> None:
                identity = exchange.identity if (exchange := exchange_of(scope)) else None
                report_too_slow("sse", client_of(request, identity), seconds)

            await stream_within(response, scope, receive, send, seconds, too_slow)
            return
        await response(scope, receive, send)

    async def by_strawberry(self, scope: Scope, receive: Receive) -> Response:
        """A stream (SSE) or GraphiQL: Strawberry's `run`, its body held to the limit."""
        request = body_limited(scope, receive, self.settings.max_body_bytes)
        response = await self.run(request)
        return conditional(request, response) if request.method == "GET" else response

    # What Strawberry's view asks of its users.

    def should_render_graphql_ide(self, request: Any) -> bool:
        if request.method != "GET" or "text/html" not in request.headers.get("accept", ""):
            return False
        params = request.query_params
        return not any(name in params for name in ("query", "extensions", "documentId"))

    async def render_graphql_ide(self, request: Request) -> Response:
        return graphiql_page(self.settings.graphiql_packages)

    async def get_context(self, request: Request | WebSocket, response: Any) -> Context:
        if isinstance(request, WebSocket):  # its key comes with `connection_init`
            return self.connection_context(request, None)
        if self.should_render_graphql_ide(request):
            return new_context(self.store, request)
        exchange = begin_exchange(request.scope, "text/event-stream")  # a subscription (SSE)
        exchange.identity = await self.charges.identify(request)
        return self.connection_context(request, exchange.identity)

    def connection_context(
        self, connection: Request | WebSocket, identity: Identity | None
    ) -> Context:
        """The context of a request's or a WebSocket's operations, metered for `identity`
        (None: anonymous)."""
        context = new_context(self.store, connection, identity)
        context.services = self.services.graphql
        context.meter = self.charges.meter(connection, identity)
        return context

    async def on_ws_connect(self, context: Context) -> UnsetType | dict[str, object] | None:
        """The key of a WebSocket's operations
        (server.graphql.subscriptions.protocols.authorization_of); a
        bad one closes it (4403)."""
        connection = context.connection
        payload = context.connection_params or {}
        authorization = authorization_of(connection, payload)
        try:
            identity = await self.charges.identify_connection(connection, authorization)
        except ApiError as refusal:
            raise ConnectionRejectionError({"message": refusal.message}) from refusal
        fresh = self.connection_context(connection, identity)
        context.identity, context.meter = fresh.identity, fresh.meter
        unset: UnsetType = UNSET
        return unset

    def stream_of(
        self, context: Context, source: AsyncGenerator[Any, None], authorization: str | None
    ) -> AsyncGenerator[Any, None]:
        """A subscription's stream of results (the gate admitted it), within its client's
        bound, ended by the drain or its key's revocation
        (server.graphql.subscriptions.protocols), a refusal
        paying the minimum (server.graphql.admission)."""
        client = client_of(context.connection, context.identity)
        keyed = context.identity is not None

        async def still_valid() -> ApiError | None:
            return await self.gate.caller_refused(context, authorization)

        stream = self.subscriptions.stream(client, keyed, source, still_valid)
        return self.gate.paid(context, stream)

    async def parse_http_body(
        self, request: AsyncHTTPRequestAdapter
    ) -> GraphQLRequestData | list[GraphQLRequestData]:
        data = await read_requests(request)  # a stream's (SSE): `respond` reads the others
        if isinstance(data, list):
            raise ApiError("A stream of events carries one subscription, not a batch.", status=400)
        data.protocol = SSE.protocol  # answered as a stream of events
        return data

    async def execute_operation(
        self,
        request: Request,
        request_adapter: AsyncHTTPRequestAdapter,
        request_data: GraphQLRequestData | list[GraphQLRequestData],
        context: Context,
        root_value: None,
        sub_response: Response,
    ) -> ExecutionResult | list[ExecutionResult] | SubscriptionExecutionResult:
        """A subscription over SSE (`respond` answers the rest): Strawberry's stream, admitted
        by the gate first, each event paid as it comes (schema.subscription)."""
        assert isinstance(request_data, GraphQLRequestData)  # `parse_http_body` refuses a batch
        _exchange(request).operation = request_data.operation_name or "subscription"
        sub_response.raw_headers = []  # the stream's own (no length: it has none)
        try:
            text = await self.gate.admit(context, request_data, SUBSCRIPTIONS)
        except GraphQLError as error:  # refused whole, before the stream begins
            code = (error.extensions or {}).get("code", ErrorCode.GRAPHQL_PARSE_FAILED)
            raise ApiError(error.message, code=ErrorCode(code)) from None
        source = await self.schema.subscribe(
            text,
            variable_values=request_data.variables,
            context_value=context,
            root_value=root_value,
            operation_name=request_data.operation_name,
        )
        authorization = request.headers.get("authorization")
        stream = self.stream_of(context, cast(AsyncGenerator[Any, None], source), authorization)
        return cast(SubscriptionExecutionResult, stream)

    async def batch(self, asked: Asked, batch: list[GraphQLRequestData]) -> list[ExecutionResult]:
        """A batch's operations: priced whole, and paid once, before any of them runs."""
        meter, exchange = asked.meter, asked.exchange
        exchange.operation = "batch"
        self.charges.check_batch_size(len(batch))
        meter.mode = MeterMode.PRICE
        for data in batch:
            await self.answer(asked, data)
        if (unpaid := await self.charges.pay_batch(meter)) is not None:
            return [self.charges.throttled(meter, cost) for cost in unpaid]
        timeout = self.settings.request_timeout_seconds
        exchange.deadline = asyncio.get_running_loop().time() + timeout
        return [await self.answer(asked, data) for data in batch]

    async def process_result(
        self, request: Request, result: ExecutionResult
    ) -> GraphQLHTTPResponse:
        return result_document(result)  # type: ignore[return-value]

    def encode_json(self, data: object) -> bytes:
        return orjson.dumps(data)  # Sent, then dropped: no need of schema.json's exact copy.

    async def get_sub_response(self, request: Request | WebSocket) -> Response:
        return Response()  # Its status and headers are set by `set_status`.

    # The almanac's own.

    async def respond(self, scope: Scope, receive: Receive, accept: str | None) -> Response:
        """A GraphQL request over HTTP (not a stream): its path, each step once (see the
        module's docstring). Strawberry's `run` would call back into the view for each hook,
        and after a kept answer missed would read the request and find its text again."""
        request = body_limited(scope, receive, self.settings.max_body_bytes)
        exchange = Exchange(response_media_type(accept))
        scope.setdefault("state", {})[EXCHANGE_KEY] = exchange  # begun (server.exchange), here
        identity, meter = await self.charges.caller(request)
        exchange.identity = identity
        headers = request.headers  # a malformed Almanac-Min-Change refuses the request (400)
        minimum = header_minimum(headers) if MIN_CHANGE_HEADER in headers else None
        data = await read_requests(StarletteRequestAdapter(request), scope["query_string"])
        asked = Asked(request, exchange, identity, meter, minimum)
        try:
            if batched := isinstance(data, list):
                results = await self.batch(asked, data)
            else:
                timeout = self.settings.request_timeout_seconds
                exchange.deadline = asyncio.get_running_loop().time() + timeout
                results = [await self.answer(asked, data)]
        except Held as held:
            return conditional(request, held.response)
        exchange.cost = sum(meter.costs)
        context, settings = asked.context, self.settings
        budget = asked.budget_headers if not batched else self.charges.headers(meter.allowance)
        of = Outcome(
            own=context is not None and context.own,
            read=context.read if context is not None else (),
            answered=asked.answered,
            allowance=meter.allowance,
            max_age=settings.cache_max_age_seconds,
            stale_bound=settings.max_staleness_seconds,
        )
        changed = context.changes.newest if context is not None else None
        response = http_response(request.method, exchange, results, batched, of, budget, changed)
        return conditional(request, response) if request.method == "GET" else response

    async def answer(self, asked: Asked, data: GraphQLRequestData) -> ExecutionResult:
        """The operation's answer, charged and reported: admitted (its text, key and minimum
        change), then the answer kept from an earlier run on the same data (it was computed by
        the pipeline from the same text and variables, under the same rules), served with no
        context made (server.graphql.operations); or its document admitted whole and run now
        (being priced, a batch's operation is run every time: only priced)."""
        meter, exchange, request = asked.meter, asked.exchange, asked.request
        pricing, priced = meter.mode is MeterMode.PRICE, len(meter.costs)
        changed = asked.context.changes.newest if asked.context is not None else None
        served: Served | Response | None = None
        try:
            operation = await self.gate.operation(
                asked.identity, data, asked.minimum, exchange.deadline, wait=not pricing
            )
            if not pricing:
                served = await self.kept.answer(
                    request, asked.identity, exchange, meter, operation, data.variables
                )
            if isinstance(served, Response):
                raise Held(served)  # a GET is never batched
            if served is None:
                found = await self.computed(asked, data, operation)
                if isinstance(found, Kept):  # another request's run kept it, while this waited
                    served = await self.kept.served(found, meter, exchange, data.variables)
                else:
                    result = found
        except NotCarried:
            raise  # the request is refused whole (a GET's mutation: 405)
        except (ApiError, GraphQLError, TimeoutError) as refusal:
            result = refused(exchange, refusal, self.settings.request_timeout_seconds)
        if isinstance(served, Served):
            if exchange.operation is None:  # named as it was sent (a throttled one, say)
                exchange.operation = data.operation_name
            asked.answered, asked.budget_headers = served.answered, served.budget_headers
            return served.result
        return await self.settled(asked, data, result, priced, changed)

    async def computed(
        self, asked: Asked, data: GraphQLRequestData, operation: Operation
    ) -> ExecutionResult | Kept:
        """The operation run now, in the request's context (made once, for its first operation
        that runs), its document admitted whole first; or, if another request was running it,
        the answer that run kept."""
        context = asked.context
        if context is None:
            context = asked.context = new_context(self.store, asked.request, asked.identity)
            context.services, context.meter = self.services.graphql, asked.meter
        context.operation, context.min_change = operation.key, operation.min_change
        context.admitted = context.answered = None
        exchange, method = asked.exchange, asked.request.method
        try:
            carried = QUERIES if method == "GET" else QUERIES_AND_MUTATIONS
            self.gate.parsed(context, data, operation.text, carried)
        finally:
            if exchange.operation is None:  # named as it was sent, or as the gate found it
                exchange.operation = operation_name(context, data)

        def run() -> Awaitable[ExecutionResult]:
            return self.run_pipeline(exchange, method, context, data, operation.text)

        if asked.meter.mode is MeterMode.PRICE:
            return await run()
        deadline = exchange.deadline
        return await self.kept.or_run(operation.key, deadline, run, operation.min_change)

    async def settled(
        self,
        asked: Asked,
        data: GraphQLRequestData,
        result: ExecutionResult,
        priced: int,
        changed: int | None,
    ) -> ExecutionResult:
        """An operation's result that was not a kept answer (run, or refused), charged (the
        minimum if it was refused before it was priced) and reported; `changed`: the request's
        newest change before it ran."""
        meter, context, exchange = asked.meter, asked.context, asked.exchange
        if exchange.operation is None:
            exchange.operation = data.operation_name
        settled = await self.charges.settle(meter, priced, result, data.variables)
        asked.budget_headers = self.charges.headers(meter.allowance)
        # The request's operations run one after another, so a newer change is this one's.
        made = context.changes.newest if context is not None else None
        if context is not None and made is not None and made != changed:
            self.gate.made(context, made)
            settled.extensions = {
                **(settled.extensions or {}),
                CHANGE_CURSOR_EXTENSION: encode_change_cursor(made),
            }
        asked.answered = context.answered if context is not None else None
        return with_freshness(asked.answered, settled)

    async def run_pipeline(
        self,
        exchange: Exchange,
        method: str,
        context: Context,
        request_data: GraphQLRequestData,
        text: str,
    ) -> ExecutionResult:
        """The operation run through Strawberry's pipeline, under the request's deadline."""
        async with asyncio.timeout_at(exchange.deadline):
            return await self.schema.execute(
                text,
                variable_values=request_data.variables,
                context_value=context,
                operation_name=request_data.operation_name,
                allowed_operation_types=OperationType.from_http(method),  # type: ignore[arg-type]
            )

    async def refused(self, request: Request, refusal: ApiError) -> Response:
        exchange = exchange_of(request.scope)  # None: refused early
        identity = exchange.identity if exchange is not None else None
        return await self.charges.refused(request, identity, refusal)


def _exchange(request: Request) -> Exchange:
    exchange = exchange_of(request.scope)
    assert exchange is not None  # `get_context` began it.
    return exchange


def operation_name(context: Context, request_data: GraphQLRequestData) -> str | None:
    """The operation's name, for the logs and metrics: as it was sent, or as the gate found it
    (a request need not send `operationName`)."""
    if request_data.operation_name is not None or context.admitted is None:
        return request_data.operation_name
    name = context.admitted.definition.name
    return name.value if name is not None else None


def events_asked(accept: str | None) -> bool:
    """Whether a request's `Accept` asks for its answer as a stream of events (GraphQL over
    SSE): read by Strawberry's transport only if it names the type at all."""
    return accept is not None and "event-stream" in accept.lower() and SSE.accepts(accept)
