"""`/graphql`: Strawberry's ASGI view, with what GraphQL over HTTP needs beyond it.

A request's path: the body, read within its size limit → the API key, if any → the GraphQL
request(s) read off HTTP (graphql_request) → for each operation, its text (sent, or persisted:
persisted_queries) → the answer kept for it, if the data has not changed since (paid for like a
run), or else Strawberry's pipeline with the schema's extensions (document checks, cost and
budget, answer keeping; see schema.extensions) → one response, with each operation's cost, the
budget left in the rate-limit headers, and for a GET query an ETag (http_caching).

What Strawberry's view leaves to its users lives here: the status codes of
`application/graphql-response+json`, 429 with `Retry-After`, the request deadline, batches
charged once before any of their operations runs, ETags, and HTTP refusals as GraphQL-shaped
JSON, each charged like a refused operation.
"""

import asyncio
from dataclasses import dataclass
from typing import Any

import orjson
from cross_web import AsyncHTTPRequestAdapter, HTTPException
from graphql import DocumentNode, get_operation_ast
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL
from strawberry.exceptions import MissingQueryError
from strawberry.http import GraphQLHTTPResponse, GraphQLRequestData
from strawberry.schema.exceptions import CannotGetOperationTypeError, InvalidOperationTypeError
from strawberry.types import ExecutionResult
from strawberry.types.graphql import OperationType

from api_errors import ApiError, ErrorCode, client_facing
from request_limits import REFUSED_COST, Budgets, throttled_error
from schema import (
    AlmanacSchema,
    Context,
    Meter,
    MeterMode,
    Services,
    digest,
    encode_json,
    kept_answer,
    new_context,
    operation_key,
    schema,
)
from server.client_budgets import ClientBudgets, rate_limit_headers
from server.exchange import Exchange, begin_exchange, exchange_of
from server.graphiql import graphiql_page
from server.graphql_request import GRAPHQL_RESPONSE, read_requests, response_media_type
from server.http_caching import cache_control, conditional, entity_tag
from server.metrics import KEPT_HIT, KEPT_MISS, PERSISTED_QUERIES
from server.persisted_queries import Found, PersistedQueries
from server.settings import Settings


@dataclass(frozen=True)
class SharedServices:
    """What every request shares: budgets and persisted queries in Redis when configured (then
    shared by every process), and the caches of the GraphQL pipeline."""

    graphql: Services
    budgets: Budgets
    persisted: PersistedQueries


class BodyTooLarge(Exception):
    pass


class AlmanacGraphQL(GraphQL[Context, None]):
    def __init__(
        self, settings: Settings, services: SharedServices, schema: AlmanacSchema = schema
    ) -> None:
        super().__init__(schema, allow_queries_via_get=True, subscription_protocols=())
        self.settings = settings
        self.services = services
        self.clients = ClientBudgets(settings, services.budgets)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, _limited(receive, self.settings.max_body_bytes))
        try:
            if (_content_length(scope) or 0) > self.settings.max_body_bytes:
                raise BodyTooLarge
            response = await self.reused(request) or await self.run(request)
            if request.method == "GET":
                response = conditional(request, response)
        except ApiError as refusal:
            response = await self.refused(request, refusal)
        except HTTPException as error:  # Strawberry's own refusals
            response = await self.refused(request, ApiError(error.reason, status=error.status_code))
        except BodyTooLarge:
            limit = self.settings.max_body_bytes
            message = (
                f"The request body is larger than this server accepts ({limit} bytes). "
                "Send a smaller request."
            )
            response = await self.refused(request, ApiError(message, status=413))
        except ClientDisconnect:
            return  # Gone (or let go for a body too slow): there is no one to answer.
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
        assert isinstance(request, Request)  # No WebSocket route leads here.
        if self.should_render_graphql_ide(request):
            return new_context(request.app.state.store, request)
        made: Context | None = getattr(request.state, "context", None)
        if made is not None:
            return made  # by `reused`, which found no kept answer: the key is read once
        exchange = begin_exchange(request.scope, response_media_type(request.headers.get("accept")))
        identity = exchange.identity = await self.clients.identify(request)
        context = new_context(request.app.state.store, request, identity)
        context.services = self.services.graphql
        context.meter = Meter(pay=lambda cost: self.clients.charge(request, identity, cost))
        request.state.context = context
        return context

    async def parse_http_body(
        self, request: AsyncHTTPRequestAdapter
    ) -> GraphQLRequestData | list[GraphQLRequestData]:
        return await read_requests(request)

    async def execute_operation(
        self,
        request: Request,
        request_adapter: AsyncHTTPRequestAdapter,
        request_data: GraphQLRequestData | list[GraphQLRequestData],
        context: Context,
        root_value: None,
        sub_response: Response,
    ) -> ExecutionResult | list[ExecutionResult]:
        """Each operation in turn; a batch is priced whole, and charged once, before it runs."""
        meter = context.meter
        assert meter is not None
        batched = isinstance(request_data, list)
        batch = request_data if isinstance(request_data, list) else [request_data]
        if batched:
            request.state.exchange.operation = "batch"
            if len(batch) > self.settings.max_batch:
                raise ApiError(
                    f"The batch holds {len(batch)} operations; the most allowed is "
                    f"{self.settings.max_batch}.",
                    code=ErrorCode.BATCH_TOO_LARGE,
                )
            meter.mode = MeterMode.PRICE
            for data in batch:
                await self.execute_single(
                    request, request_adapter, sub_response, context, None, data
                )
            if (total := sum(meter.costs)) > self.settings.max_query_cost:
                raise ApiError(
                    f"The batch costs {total} points together; the most one request may cost "
                    f"is {self.settings.max_query_cost}.",
                    code=ErrorCode.MAX_COST_EXCEEDED,
                )
            costs, meter.costs, meter.mode = meter.costs, [], MeterMode.PREPAID
            if not (await meter.charge(total)).allowed:
                results = [self.throttled(meter, cost) for cost in costs]
                self.set_status(request, sub_response, meter, results, batched)
                return results
        exchange = request.state.exchange
        exchange.deadline = (
            asyncio.get_running_loop().time() + self.settings.request_timeout_seconds
        )
        results = [
            await self.execute_single(request, request_adapter, sub_response, context, None, data)
            for data in batch
        ]
        self.set_status(request, sub_response, meter, results, batched)
        return results if batched else results[0]

    async def execute_single(
        self,
        request: Request,
        request_adapter: AsyncHTTPRequestAdapter,
        sub_response: Response,
        context: Context,
        root_value: None,
        request_data: GraphQLRequestData,
    ) -> ExecutionResult:
        meter = context.meter
        assert meter is not None
        priced = len(meter.costs)
        try:
            result = await self.answer(request, request_adapter.method, context, request_data)
        except InvalidOperationTypeError as error:
            raise ApiError(
                "Mutations must be sent with POST; GET carries queries only.", status=405
            ) from error
        except MissingQueryError as error:
            raise ApiError("No GraphQL query found in the request: send `query`.") from error
        except CannotGetOperationTypeError:
            name = request_data.operation_name
            message = (
                f'Unknown operation named "{name}".'
                if name
                else "The document holds several operations: name one in `operationName`."
            )
            result = _failed(ApiError(message, code=ErrorCode.GRAPHQL_VALIDATION_FAILED))
        except TimeoutError:
            request.state.exchange.timed_out = True
            seconds = self.settings.request_timeout_seconds
            message = f"The request ran longer than {seconds:g} seconds and was stopped."
            result = _failed(ApiError(message, code=ErrorCode.TIMEOUT))
        return await self.settled(meter, priced, result, request_data.variables)

    async def settled(
        self, meter: Meter, priced: int, result: ExecutionResult, variables: dict[str, Any] | None
    ) -> ExecutionResult:
        """The operation's result as the client gets it: charged (the flat charge if it was
        refused before it was priced), its errors as the client sees them, its cost reported."""
        if len(meter.costs) == priced:
            meter.costs.append(REFUSED_COST)
            if meter.mode is MeterMode.PAY:
                allowance = await meter.charge(REFUSED_COST)
                if not allowance.allowed:
                    result = _failed(throttled_error(REFUSED_COST, allowance))
        result.errors = [client_facing(error, variables) for error in result.errors or []] or None
        result.extensions = {"cost": self.clients.cost_report(meter.costs[-1], meter.allowance)}
        return result

    async def process_result(
        self, request: Request, result: ExecutionResult
    ) -> GraphQLHTTPResponse:
        response: dict[str, Any] = {}
        if result.errors:
            response["errors"] = [error.formatted for error in result.errors]
        if not _is_request_error(result):
            response["data"] = result.data
        if result.extensions:
            response["extensions"] = result.extensions
        return response  # type: ignore[return-value]

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
        without running the pipeline: it computed this answer from the same text and
        variables, under the same rules. Else None, and the request runs as any other."""
        if request.method not in ("GET", "POST") or self.should_render_graphql_ide(request):
            return None
        context = await self.get_context(request, None)
        request_data = await self.parse_http_body(self.request_adapter_class(request))
        meter = context.meter
        if isinstance(request_data, list) or meter is None:
            return None
        try:
            _, found = await self.operation_text(context, request_data)
        except ApiError:
            return None  # The pipeline refuses it, and says why.
        if (result := await self.kept(context, meter)) is None:
            return None  # Counted when the request runs (`answer`).
        _count(found, kept=True)
        result = await self.settled(meter, 0, result, request_data.variables)
        sub_response = await self.get_sub_response(request)
        self.set_status(request, sub_response, meter, [result], batched=False)
        return self.create_response(await self.process_result(request, result), sub_response)

    async def answer(
        self, request: Request, method: str, context: Context, request_data: GraphQLRequestData
    ) -> ExecutionResult:
        """The operation's answer: kept from an earlier run on the same data, or run now."""
        meter = context.meter
        assert meter is not None
        try:
            text, found = await self.operation_text(context, request_data)
        except ApiError as refusal:
            if refusal.code == ErrorCode.PERSISTED_QUERY_NOT_FOUND:
                PERSISTED_QUERIES.labels("miss").inc()
            return _failed(refusal)
        if meter.mode is MeterMode.PRICE:
            return await self.run_pipeline(request, method, context, request_data, text)
        kept = await self.kept(context, meter)
        _count(found, kept=kept is not None)
        if kept is not None:
            return kept
        return await self.run_pipeline(request, method, context, request_data, text)

    async def run_pipeline(
        self,
        request: Request,
        method: str,
        context: Context,
        request_data: GraphQLRequestData,
        text: str,
    ) -> ExecutionResult:
        """The operation run through Strawberry's pipeline, under the request's deadline."""
        exchange: Exchange = request.state.exchange
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
                exchange.operation = request_data.operation_name or self.operation_named(text)

    async def operation_text(
        self, context: Context, request_data: GraphQLRequestData
    ) -> tuple[str, Found]:
        """The operation's text (sent, or persisted) and how it was found; it also names the
        operation in the context."""
        identity = context.identity
        text, found = await self.services.persisted.document_text(
            request_data.query,
            request_data.extensions,
            may_run_any=identity is not None and identity.is_admin,
        )
        context.operation = operation_key(text, request_data.operation_name, request_data.variables)
        return text, found

    def operation_named(self, text: str) -> str | None:
        """The name of the document's one operation, if it was parsed before (for the logs
        and metrics: a request need not send `operationName`)."""
        known = self.services.graphql.documents.get(text)
        if known is None or not isinstance(known.parsed, DocumentNode):
            return None
        operation = get_operation_ast(known.parsed)
        return operation.name.value if operation is not None and operation.name else None

    async def kept(self, context: Context, meter: Meter) -> ExecutionResult | None:
        """The answer kept for the context's operation on this data, paid for; else None."""
        services = self.services.graphql
        assert context.operation is not None
        cost = services.costs.get(context.operation)
        kept = kept_answer(services, context.operation, context.store.version.current)
        if kept is None or cost is None:
            return None
        meter.costs.append(cost)
        if meter.mode is MeterMode.PAY and not (await meter.charge(cost)).allowed:
            assert meter.allowance is not None
            return _failed(throttled_error(cost, meter.allowance))
        exchange: Exchange = context.request.state.exchange
        exchange.digest = kept.digest
        if exchange.operation != "batch":
            exchange.operation = kept.operation_name
        return ExecutionResult(data=orjson.Fragment(kept.data), errors=None)  # type: ignore[arg-type]

    async def refused(self, request: Request, refusal: ApiError) -> Response:
        exchange = exchange_of(request.scope)  # None: refused early
        identity = exchange.identity if exchange is not None else None
        return await self.clients.refused(request, identity, refusal)

    def throttled(self, meter: Meter, cost: int) -> ExecutionResult:
        assert meter.allowance is not None
        result = _failed(throttled_error(cost, meter.allowance))
        result.extensions = {"cost": self.clients.cost_report(cost, meter.allowance)}
        return result

    def set_status(
        self,
        request: Request,
        response: Response,
        meter: Meter,
        results: list[ExecutionResult],
        batched: bool,
    ) -> None:
        """The response's status, media type and headers, from its operations' outcomes."""
        exchange: Exchange = request.state.exchange
        exchange.cost = sum(meter.costs)
        exchange.code = next(
            (e.extensions.get("code") for r in results for e in r.errors or () if e.extensions),
            None,
        )
        response.media_type = exchange.media_type
        allowance = meter.allowance
        headers = rate_limit_headers(allowance) if allowance is not None else {}
        headers["cache-control"] = "no-store"
        first = results[0]
        if allowance is not None and not allowance.allowed:
            response.status_code = 429
            headers["retry-after"] = str(allowance.retry_after)
        elif exchange.timed_out:
            response.status_code = 504
        elif not batched and response.media_type == GRAPHQL_RESPONSE and _is_request_error(first):
            response.status_code = 400
        else:
            response.status_code = 200
        if not batched and request.method == "GET" and first.data is not None and not first.errors:
            content_digest = exchange.digest or digest(encode_json(first.data))
            headers["etag"] = entity_tag(content_digest)
            public = exchange.identity is None
            headers["cache-control"] = cache_control(public, self.settings.cache_max_age_seconds)
            headers["vary"] = "Accept, Accept-Encoding, Authorization"
        response.raw_headers = [(name.encode(), value.encode()) for name, value in headers.items()]


def _count(found: Found, *, kept: bool) -> None:
    """An operation's lookups, in the metrics: its persisted query, its kept answer."""
    if found in ("hit", "registered"):
        PERSISTED_QUERIES.labels(found).inc()
    (KEPT_HIT if kept else KEPT_MISS).inc()


def _failed(error: ApiError) -> ExecutionResult:
    return ExecutionResult(data=None, errors=[error.as_graphql_error()])


def _is_request_error(result: ExecutionResult) -> bool:
    """No data and no error at a path: the request failed as a whole (its variables, say)."""
    return result.data is None and not any(error.path for error in result.errors or ())


def _content_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            return int(value) if value.isdigit() else None
    return None


def _limited(receive: Receive, limit: int) -> Receive:
    """`receive`, refusing a body (even one sent without a length) beyond `limit` bytes.

    (Starlette's RequestBodyLimitMiddleware answers a body declared too long with its own
    plain-text 413, whatever the app answers: this API's refusals are GraphQL-shaped.)
    """
    received = 0

    async def receive_within_limit() -> Message:
        nonlocal received
        message = await receive()
        received += len(message.get("body", b""))
        if received > limit:
            raise BodyTooLarge
        return message

    return receive_within_limit
