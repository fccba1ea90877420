"""`/graphql`: Strawberry's ASGI view, with what GraphQL over HTTP needs beyond it.

A request's path: the body, within its size limit → the API key → the GraphQL request(s), read
once → each operation admitted by the gate (server.graphql.admission: its text, sent or persisted
and
trusted, found once) → the answer kept for it on this data, looked up once (`reused`, before
Strawberry's `run`, for a single operation; `answer` for a batch's) → or Strawberry's pipeline
with the schema's extensions → one response, with each operation's cost (server.charges, where
every charge is made) and for a GET query an ETag. A subscription over SSE is admitted by the
same gate, then streamed; over a WebSocket, see server.graphql.subscriptions.protocols.
"""

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Mapping
from datetime import timedelta
from typing import Any, cast

import orjson
from cross_web import AsyncHTTPRequestAdapter, HTTPException, StarletteRequestAdapter
from graphql import GraphQLError
from starlette.requests import ClientDisconnect, HTTPConnection, Request
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
from server.graphql.operations import KeptLookup, operation_named
from server.graphql.request import read_requests, response_media_type
from server.graphql.response import failed, outcome, result_document
from server.graphql.subscriptions.protocols import (
    Subscriptions,
    TextWebSocketAdapter,
    TransportWSHandler,
    authorization_of,
)
from server.graphql.subscriptions.slow_subscribers import report_too_slow, stream_within
from server.http_caching import conditional
from server.services import SharedServices
from server.settings import Settings

SSE = SSETransport()
"""GraphQL over SSE (Strawberry's): what tells a request asking for a stream of events."""


class RequestAdapter(StarletteRequestAdapter):
    """Strawberry's adapter of a Starlette request, the request kept for the view's hooks."""

    def __init__(self, request: Request) -> None:
        super().__init__(request)
        self.request = request


class AlmanacGraphQL(GraphQL[Context, None]):
    request_adapter_class = RequestAdapter
    graphql_transport_ws_handler_class = TransportWSHandler
    websocket_adapter_class = TextWebSocketAdapter

    def __init__(
        self, settings: Settings, services: SharedServices, schema: AlmanacSchema = schema
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
        self.charges = Charges(settings, services.budgets)
        self.gate = Gate(settings, services, self.charges)
        self.kept = KeptLookup(services.graphql, self.charges)
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
        request = Request(scope, limited(receive, self.settings.max_body_bytes))
        try:
            if declared_too_large(scope, self.settings.max_body_bytes):
                raise BodyTooLarge
            streamed = asks_for_events(request.headers)
            # A stream (SSE) is never a kept answer: each event is made, and paid, as it comes.
            response = (not streamed and await self.reused(request)) or await self.run(request)
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
            return new_context(request.app.state.store, request)
        if (exchange := exchange_of(request.scope)) is not None and exchange.context is not None:
            return exchange.context  # made by `reused`, which found no kept answer
        if asks_for_events(request.headers):
            media_type = "text/event-stream"  # a subscription over SSE
        else:
            media_type = response_media_type(request.headers.get("accept"))
        exchange = begin_exchange(request.scope, media_type)
        identity = exchange.identity = await self.charges.identify(request)
        context = new_context(request.app.state.store, request, identity)
        context.services = self.services.graphql
        context.meter = self.charges.meter(request, identity)
        exchange.context = context
        return context

    def connection_context(self, connection: HTTPConnection, identity: Identity | None) -> Context:
        """The context of a WebSocket's operations, metered for `identity` (None: anonymous)."""
        context = new_context(connection.app.state.store, connection, identity)
        context.services = self.services.graphql
        context.meter = self.charges.meter(connection, identity)
        return context

    async def on_ws_connect(self, context: Context) -> UnsetType | dict[str, object] | None:
        """The key of a WebSocket's operations
        (server.graphql.subscriptions.protocols.authorization_of); a
        bad one closes it (4403)."""
        connection = context.request
        payload = getattr(context, "connection_params", None) or {}
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
        client = client_of(context.request, context.identity)
        keyed = context.identity is not None

        async def still_valid() -> ApiError | None:
            return await self.gate.caller_refused(context, authorization)

        stream = self.subscriptions.stream(client, keyed, source, still_valid)
        return self.gate.paid(context, stream)

    async def parse_http_body(
        self, request: AsyncHTTPRequestAdapter
    ) -> GraphQLRequestData | list[GraphQLRequestData]:
        exchange = (
            exchange_of(request.request.scope) if isinstance(request, RequestAdapter) else None
        )
        if exchange is not None and exchange.request_data is not None:
            return exchange.request_data  # read by `reused` already
        data = await read_requests(request)
        if asks_for_events(request.headers) and isinstance(data, GraphQLRequestData):
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
        """Each operation in turn; a batch is priced whole, and paid once, before it runs. A
        stream (SSE) is Strawberry's, admitted by the gate first, each event paid as it comes
        (schema.subscription)."""
        if isinstance(request_data, GraphQLRequestData) and request_data.protocol == SSE.protocol:
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
        meter, exchange = _meter(context), _exchange(request)
        batch = request_data if isinstance(request_data, list) else [request_data]
        batched, method = isinstance(request_data, list), request_adapter.method
        if batched:
            exchange.operation = "batch"
            self.charges.check_batch_size(len(batch))
            meter.mode = MeterMode.PRICE
            for data in batch:
                await self.answer(request, method, context, data)
            if (unpaid := await self.charges.pay_batch(meter)) is not None:
                results = [self.charges.throttled(meter, cost) for cost in unpaid]
                self.set_status(request, sub_response, meter, results, batched)
                return results
        timeout = self.settings.request_timeout_seconds
        exchange.deadline = asyncio.get_running_loop().time() + timeout
        results = [await self.answer(request, method, context, data) for data in batch]
        self.set_status(request, sub_response, meter, results, batched)
        return results if batched else results[0]

    async def process_result(
        self, request: Request, result: ExecutionResult
    ) -> GraphQLHTTPResponse:
        return result_document(result)  # type: ignore[return-value]

    def encode_json(self, data: object) -> bytes:
        return orjson.dumps(data)  # Sent, then dropped: no need of schema.json's exact copy.

    async def get_sub_response(self, request: Request | WebSocket) -> Response:
        return Response()  # Its status and headers are set by `set_status`.

    def create_response(
        self,
        response_data: GraphQLHTTPResponse | list[GraphQLHTTPResponse],
        sub_response: Response,
    ) -> Response:
        response = Response(
            self.encode_json(response_data), sub_response.status_code, None, sub_response.media_type
        )
        response.raw_headers.extend(sub_response.raw_headers)
        return response

    # The almanac's own.

    async def reused(self, request: Request) -> Response | None:
        """The answer to a single operation asked again on the same data, if one was kept,
        without running the pipeline (it computed this answer from the same text and
        variables, under the same rules); a 304 for one the client holds. Else None, and the
        request runs as any other, with what was read here."""
        if request.method not in ("GET", "POST") or self.should_render_graphql_ide(request):
            return None
        context = await self.get_context(request, None)
        exchange = _exchange(request)
        exchange.request_data = data = await read_requests(self.request_adapter_class(request))
        if isinstance(data, list):
            return None
        meter = _meter(context)
        try:
            await self.gate.text(context, data)
        except ApiError:
            return None  # The pipeline refuses it, and says why.
        kept = self.kept.find(context)
        if kept is None:
            return None
        if request.method == "GET" and (held := await self.kept.held(request, context, kept)):
            return held
        result = await self.kept.pay(context, exchange, kept)
        result = await self.charges.settle(meter, 0, result, data.variables)
        sub_response = await self.get_sub_response(request)
        self.set_status(request, sub_response, meter, [result], batched=False)
        return self.create_response(await self.process_result(request, result), sub_response)

    async def answer(
        self, request: Request, method: str, context: Context, request_data: GraphQLRequestData
    ) -> ExecutionResult:
        """The operation's answer, charged and reported: kept from an earlier run on the same
        data (a batch's operations; a single one was looked for by `reused`), or run now."""
        meter, exchange = _meter(context), _exchange(request)
        priced = len(meter.costs)
        carried = QUERIES if method == "GET" else QUERIES_AND_MUTATIONS
        try:
            text = await self.gate.admit(context, request_data, carried)

            def run() -> Awaitable[ExecutionResult]:
                return self.run_pipeline(exchange, method, context, request_data, text)

            if meter.mode is MeterMode.PRICE:
                result = await run()
            else:
                result = await self.kept.or_run(context, exchange, run)
        except NotCarried:
            raise  # the request is refused whole (a GET's mutation: 405)
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
            if exchange.operation is None:  # refused by the gate: named as it was sent
                exchange.operation = request_data.operation_name
        return await self.charges.settle(meter, priced, result, request_data.variables)

    async def run_pipeline(
        self,
        exchange: Exchange,
        method: str,
        context: Context,
        request_data: GraphQLRequestData,
        text: str,
    ) -> ExecutionResult:
        """The operation run through Strawberry's pipeline, under the request's deadline."""
        try:
            async with asyncio.timeout_at(exchange.deadline):
                return await self.schema.execute(
                    text,
                    variable_values=request_data.variables,
                    context_value=context,
                    operation_name=request_data.operation_name,
                    allowed_operation_types=OperationType.from_http(method),  # type: ignore[arg-type]
                )
        finally:
            if exchange.operation is None:  # Parsed now: its name is known.
                exchange.operation = request_data.operation_name or operation_named(
                    self.services.graphql, text
                )

    async def refused(self, request: Request, refusal: ApiError) -> Response:
        exchange = exchange_of(request.scope)  # None: refused early
        identity = exchange.identity if exchange is not None else None
        return await self.charges.refused(request, identity, refusal)

    def set_status(
        self,
        request: Request,
        response: Response,
        meter: Meter,
        results: list[ExecutionResult],
        batched: bool,
    ) -> None:
        """The response's status, media type and headers, from its operations' outcomes."""
        exchange = _exchange(request)
        exchange.cost = sum(meter.costs)
        response.media_type = exchange.media_type
        max_age = self.settings.cache_max_age_seconds
        status, caching = outcome(
            request.method, exchange, meter.allowance, results, batched, max_age
        )
        headers = {**self.charges.headers(meter.allowance), **caching}
        response.status_code = status
        response.raw_headers = [(name.encode(), value.encode()) for name, value in headers.items()]


def _meter(context: Context) -> Meter:
    assert context.meter is not None  # `get_context` gave it one.
    return context.meter


def _exchange(request: Request) -> Exchange:
    exchange = exchange_of(request.scope)
    assert exchange is not None  # `get_context` began it.
    return exchange


def asks_for_events(headers: Mapping[str, str]) -> bool:
    """Whether a request asks for its answer as a stream of events (GraphQL over SSE)."""
    return SSE.accepts(headers.get("accept", ""))
