"""`/graphql`: Strawberry's ASGI view, with what GraphQL over HTTP needs beyond it.

A GraphQL request over HTTP takes one path (`respond`), each step once: the body within its size
limit (`__call__`) → the request's record (server.exchange), the API key and the context →
the GraphQL request(s), read → each operation (`answer`): its text admitted by the gate
(server.graphql.admission: sent or persisted, and trusted) → the answer kept for it on this
data, looked up once (the one place a kept answer is served) → else its document parsed and
its operation selected by the gate, once (`Context.admitted`, where the pipeline's hooks find
them), and Strawberry's pipeline (`schema.execute`) with the schema's extensions, which price
and charge it (server.charges, where every charge is made) → one response, with each
operation's cost, and for a GET query an ETag. Strawberry's `run` serves what it adds to that:
a subscription over SSE (its hooks `get_context`, `parse_http_body`, `execute_operation`),
admitted by the same gate, then streamed; GraphiQL; WebSockets (see
server.graphql.subscriptions.protocols).
"""

import asyncio
from collections.abc import AsyncGenerator, Awaitable
from datetime import timedelta
from typing import Any, cast

import orjson
from cross_web import AsyncHTTPRequestAdapter, HTTPException, StarletteRequestAdapter
from graphql import GraphQLError
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
from schema import AlmanacSchema, Context, Identity, Meter, MeterMode, new_context, schema
from server.body_limit import BodyTooLarge, declared_too_large, limited, too_large
from server.charges import Charges, client_of
from server.exchange import Exchange, begin_exchange, exchange_of
from server.graphql.admission import QUERIES, QUERIES_AND_MUTATIONS, SUBSCRIPTIONS, Gate, NotCarried
from server.graphql.graphiql import graphiql_page
from server.graphql.operations import KeptLookup
from server.graphql.refresh import Refresher
from server.graphql.request import read_requests, response_media_type
from server.graphql.response import failed, outcome, result_document, with_freshness
from server.graphql.services import SharedServices
from server.graphql.subscriptions.protocols import (
    Subscriptions,
    TextWebSocketAdapter,
    TransportWSHandler,
    authorization_of,
)
from server.graphql.subscriptions.slow_subscribers import report_too_slow, stream_within
from server.http_caching import conditional
from server.min_change import (
    CHANGE_CURSOR_EXTENSION,
    CHANGE_CURSOR_HEADER,
    ChangeNotReached,
    header_minimum,
)
from server.settings import Settings
from store import encode_change_cursor

SSE = SSETransport()
"""GraphQL over SSE (Strawberry's): what tells a request asking for a stream of events."""


class Held(Exception):
    """A GET whose client holds the kept answer already: its 304, out of Strawberry's `run`."""

    def __init__(self, response: Response) -> None:
        super().__init__("not modified")
        self.response = response


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
        self.kept = KeptLookup(services.graphql, self.charges)
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
        request = Request(scope, limited(receive, self.settings.max_body_bytes, scope))
        try:
            if declared_too_large(scope, self.settings.max_body_bytes):
                raise BodyTooLarge
            accept = request.headers.get("accept")
            if events_asked(accept) or self.should_render_graphql_ide(request):
                response = await self.run(request)  # a stream (SSE), or GraphiQL: Strawberry's
            else:
                response = await self.respond(request, accept)
            if request.method == "GET":
                response = conditional(request, response)
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

    async def batch(
        self,
        request: Request,
        exchange: Exchange,
        context: Context,
        batch: list[GraphQLRequestData],
    ) -> list[ExecutionResult]:
        """A batch's operations: priced whole, and paid once, before any of them runs."""
        meter = _meter(context)
        exchange.operation = "batch"
        self.charges.check_batch_size(len(batch))
        meter.mode = MeterMode.PRICE
        for data in batch:
            await self.answer(request, exchange, context, data)
        if (unpaid := await self.charges.pay_batch(meter)) is not None:
            return [self.charges.throttled(meter, cost) for cost in unpaid]
        timeout = self.settings.request_timeout_seconds
        exchange.deadline = asyncio.get_running_loop().time() + timeout
        return [await self.answer(request, exchange, context, data) for data in batch]

    async def process_result(
        self, request: Request, result: ExecutionResult
    ) -> GraphQLHTTPResponse:
        return result_document(result)  # type: ignore[return-value]

    def encode_json(self, data: object) -> bytes:
        return orjson.dumps(data)  # Sent, then dropped: no need of schema.json's exact copy.

    async def get_sub_response(self, request: Request | WebSocket) -> Response:
        return Response()  # Its status and headers are set by `set_status`.

    # The almanac's own.

    async def respond(self, request: Request, accept: str | None) -> Response:
        """A GraphQL request over HTTP (not a stream): its path, each step once (see the
        module's docstring). Strawberry's `run` would call back into the view for each hook,
        and after a kept answer missed would read the request and find its text again."""
        media_type = response_media_type(accept)
        exchange = begin_exchange(request.scope, media_type)
        identity = exchange.identity = await self.charges.identify(request)
        context = self.connection_context(request, identity)
        header_minimum(request.headers)  # a malformed one refuses the whole request (400)
        data = await read_requests(StarletteRequestAdapter(request))
        try:
            if isinstance(data, list):
                results = await self.batch(request, exchange, context, data)
            else:
                timeout = self.settings.request_timeout_seconds
                exchange.deadline = asyncio.get_running_loop().time() + timeout
                results = [await self.answer(request, exchange, context, data)]
        except Held as held:
            return held.response
        batched = isinstance(data, list)
        status, headers = self.status(request, exchange, context, results, batched)
        documents = [result_document(result) for result in results]
        body = self.encode_json(documents if batched else documents[0])
        response = Response(body, status, None, exchange.media_type)
        response.raw_headers.extend(headers)
        if (newest := context.changes.newest) is not None:  # the request changed something
            response.headers[CHANGE_CURSOR_HEADER] = encode_change_cursor(newest)
        return response

    async def answer(
        self,
        request: Request,
        exchange: Exchange,
        context: Context,
        request_data: GraphQLRequestData,
    ) -> ExecutionResult:
        """The operation's answer, charged and reported: its text admitted, then the answer
        kept from an earlier run on the same data (it was computed by the pipeline from the
        same text and variables, under the same rules), or its document admitted whole and
        run now (being priced, a batch's operation is run every time: only priced)."""
        meter, method = _meter(context), request.method
        priced, changed = len(meter.costs), context.changes.newest
        carried = QUERIES if method == "GET" else QUERIES_AND_MUTATIONS
        try:
            text = await self.gate.text(context, request_data)
            pricing, minimum = meter.mode is MeterMode.PRICE, header_minimum(request.headers)
            await self.gate.fresh_enough(
                context, request_data, minimum, exchange.deadline, wait=not pricing
            )
            kept = self.kept.find(context) if meter.mode is not MeterMode.PRICE else None
            if kept is not None:
                if method == "GET" and (
                    held := await self.kept.held(request, context, exchange, kept)
                ):
                    raise Held(held)  # a GET is never batched
                result = await self.kept.pay(context, exchange, kept)
            else:
                self.gate.parsed(context, request_data, text, carried)

                def run() -> Awaitable[ExecutionResult]:
                    return self.run_pipeline(exchange, method, context, request_data, text)

                if meter.mode is MeterMode.PRICE:
                    result = await run()
                else:
                    result = await self.kept.or_run(context, exchange, run)
        except NotCarried:
            raise  # the request is refused whole (a GET's mutation: 405)
        except ChangeNotReached as refusal:
            exchange.timed_out = True
            result = failed(refusal)
        except ApiError as refusal:
            result = failed(refusal)
        except GraphQLError as error:  # the parser's refusal
            result = ExecutionResult(data=None, errors=[error])
        except TimeoutError:
            exchange.timed_out = True
            seconds = self.settings.request_timeout_seconds
            message = f"The request ran longer than {seconds:g} seconds and was stopped."
            result = failed(ApiError(message, code=ErrorCode.TIMEOUT))
        finally:
            if exchange.operation is None:  # named as it was sent, or as the gate found it
                exchange.operation = operation_name(context, request_data)
        settled = await self.charges.settle(meter, priced, result, request_data.variables)
        # The request's operations run one after another, so a newer change is this one's.
        if (made := context.changes.newest) is not None and made != changed:
            self.gate.made(context, made)
            settled.extensions = {
                **(settled.extensions or {}),
                CHANGE_CURSOR_EXTENSION: encode_change_cursor(made),
            }
        return with_freshness(context, settled)  # extensions.freshness (a query's)

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

    def status(
        self,
        request: Request,
        exchange: Exchange,
        context: Context,
        results: list[ExecutionResult],
        batched: bool,
    ) -> tuple[int, list[tuple[bytes, bytes]]]:
        """The response's status and headers, from its operations' outcomes."""
        meter = _meter(context)
        exchange.cost = sum(meter.costs)
        max_age, stale = self.settings.cache_max_age_seconds, self.settings.max_staleness_seconds
        status, caching = outcome(
            request.method, exchange, context, meter.allowance, results, batched, max_age, stale
        )
        headers = {**self.charges.headers(meter.allowance), **caching}
        return status, [(name.encode(), value.encode()) for name, value in headers.items()]


def _meter(context: Context) -> Meter:
    assert context.meter is not None  # `get_context` gave it one.
    return context.meter


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
