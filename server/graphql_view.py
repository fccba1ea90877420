"""`/graphql`: Strawberry's ASGI view, with what GraphQL over HTTP needs beyond it.

A request's path: the body, read within its size limit → the API key, if any → the GraphQL
request(s) read off HTTP (graphql_request), once → for each operation, its text (sent, or
persisted: persisted_queries), once → the answer kept for it, if the data has not changed since,
looked up once (`reused`, in front of Strawberry's `run`, for a single operation; `answer`, for
each operation of a batch) → or else Strawberry's pipeline with the schema's extensions (document
checks, cost and budget, answer keeping; see schema.extensions) → one response, with each
operation's cost and the budget's headers (server.charges, where every charge is made), and for a
GET query an ETag (http_caching).
"""

import asyncio
from dataclasses import dataclass
from typing import Any

import orjson
from cross_web import AsyncHTTPRequestAdapter, HTTPException, StarletteRequestAdapter
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL
from strawberry.exceptions import MissingQueryError
from strawberry.http import GraphQLHTTPResponse, GraphQLRequestData
from strawberry.schema.exceptions import InvalidOperationTypeError
from strawberry.types import ExecutionResult
from strawberry.types.graphql import OperationType

from api_errors import ApiError, ErrorCode, client_facing
from request_limits import Budgets
from schema import (
    AlmanacSchema,
    Context,
    Meter,
    MeterMode,
    Services,
    digest,
    encode_json,
    new_context,
    schema,
)
from server.body_limit import BodyTooLarge, declared_too_large, limited
from server.charges import MINIMUM, Charges
from server.exchange import Exchange, begin_exchange, exchange_of
from server.graphiql import graphiql_page
from server.graphql_request import GRAPHQL_RESPONSE, read_requests, response_media_type
from server.http_caching import cache_control, conditional, entity_tag, held_etag
from server.operations import KeptLookup, OperationText, operation_named
from server.persisted_queries import PersistedQueries
from server.settings import Settings


@dataclass(frozen=True)
class SharedServices:
    """What every request shares: budgets and persisted queries in Redis when configured (then
    shared by every process), and the caches of the GraphQL pipeline."""

    graphql: Services
    budgets: Budgets
    persisted: PersistedQueries


class RequestAdapter(StarletteRequestAdapter):
    """Strawberry's adapter of a Starlette request, the request kept for the view's hooks."""

    def __init__(self, request: Request) -> None:
        super().__init__(request)
        self.request = request


class AlmanacGraphQL(GraphQL[Context, None]):
    request_adapter_class = RequestAdapter

    def __init__(
        self, settings: Settings, services: SharedServices, schema: AlmanacSchema = schema
    ) -> None:
        super().__init__(schema, allow_queries_via_get=True, subscription_protocols=())
        self.settings = settings
        self.services = services
        self.charges = Charges(settings, services.budgets)
        self.texts = OperationText(services.persisted)
        self.kept = KeptLookup(services.graphql, self.charges)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] == "HEAD":  # A GET without its body (the server sends none).
            scope = {**scope, "method": "GET"}
        request = Request(scope, limited(receive, self.settings.max_body_bytes))
        try:
            if declared_too_large(scope, self.settings.max_body_bytes):
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
        if (exchange := exchange_of(request.scope)) is not None and exchange.context is not None:
            return exchange.context  # made by `reused`, which found no kept answer
        exchange = begin_exchange(request.scope, response_media_type(request.headers.get("accept")))
        identity = exchange.identity = await self.charges.identify(request)
        context = new_context(request.app.state.store, request, identity)
        context.services = self.services.graphql
        context.meter = self.charges.meter(request, identity)
        exchange.context = context
        return context

    async def parse_http_body(
        self, request: AsyncHTTPRequestAdapter
    ) -> GraphQLRequestData | list[GraphQLRequestData]:
        exchange = (
            exchange_of(request.request.scope) if isinstance(request, RequestAdapter) else None
        )
        if exchange is not None and exchange.request_data is not None:
            return exchange.request_data  # read by `reused` already
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
        """Each operation in turn; a batch is priced whole, and paid once, before it runs."""
        meter, exchange = _meter(context), _exchange(request)
        batch = request_data if isinstance(request_data, list) else [request_data]
        batched, method = isinstance(request_data, list), request_adapter.method
        if batched:
            exchange.operation = "batch"
            if len(batch) > self.settings.max_batch:
                raise ApiError(
                    f"The batch holds {len(batch)} operations; the most allowed is "
                    f"{self.settings.max_batch}.",
                    code=ErrorCode.BATCH_TOO_LARGE,
                )
            meter.mode = MeterMode.PRICE
            for data in batch:
                await self.answer(request, method, context, data)
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
        timeout = self.settings.request_timeout_seconds
        exchange.deadline = asyncio.get_running_loop().time() + timeout
        results = [await self.answer(request, method, context, data) for data in batch]
        self.set_status(request, sub_response, meter, results, batched)
        return results if batched else results[0]

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
            await self.texts.resolve(context, data)
        except ApiError:
            return None  # The pipeline refuses it, and says why.
        kept = self.kept.find(context)
        if kept is None:
            return None
        etag = None
        if request.method == "GET":
            etag = held_etag(request, kept.answer.digest, len(kept.answer.data))
        if etag is not None:
            exchange.cost, exchange.operation = MINIMUM, kept.answer.operation_name
            public, max_age = context.identity is None, self.settings.cache_max_age_seconds
            headers = {"etag": etag, "cache-control": cache_control(public, max_age), "vary": VARY}
            return await self.charges.not_modified(request, context.identity, headers)
        result = await self.kept.pay(context, exchange, kept)
        result = await self.settled(meter, 0, result, data.variables)
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
        try:
            text = await self.texts.resolve(context, request_data)
            kept = None
            if meter.mode is MeterMode.PREPAID:
                kept = self.kept.find(context)
            if kept is not None:
                result = await self.kept.pay(context, exchange, kept)
            else:
                result = await self.run_pipeline(exchange, method, context, request_data, text)
        except ApiError as refusal:
            result = _failed(refusal)
        except InvalidOperationTypeError as error:
            raise ApiError(
                "Mutations must be sent with POST; GET carries queries only.", status=405
            ) from error
        except MissingQueryError as error:
            raise ApiError("No GraphQL query found in the request: send `query`.") from error
        except TimeoutError:
            exchange.timed_out = True
            seconds = self.settings.request_timeout_seconds
            message = f"The request ran longer than {seconds:g} seconds and was stopped."
            result = _failed(ApiError(message, code=ErrorCode.TIMEOUT))
        return await self.settled(meter, priced, result, request_data.variables)

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

    async def settled(
        self, meter: Meter, priced: int, result: ExecutionResult, variables: dict[str, Any] | None
    ) -> ExecutionResult:
        """The operation's result as the client gets it: charged (the minimum if it was refused
        before it was priced), its errors as the client sees them, its cost reported."""
        if len(meter.costs) == priced and (throttled := await self.charges.unpriced(meter)):
            result = _failed(throttled)
        result.errors = [client_facing(error, variables) for error in result.errors or []] or None
        result.extensions = {"cost": self.charges.cost_report(meter.costs[-1], meter.allowance)}
        return result

    async def refused(self, request: Request, refusal: ApiError) -> Response:
        exchange = exchange_of(request.scope)  # None: refused early
        identity = exchange.identity if exchange is not None else None
        return await self.charges.refused(request, identity, refusal)

    def throttled(self, meter: Meter, cost: int) -> ExecutionResult:
        assert meter.allowance is not None
        result = _failed(self.charges.throttle(cost, meter.allowance))
        result.extensions = {"cost": self.charges.cost_report(cost, meter.allowance)}
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
        exchange = _exchange(request)
        exchange.cost = sum(meter.costs)
        exchange.code = next(
            (e.extensions.get("code") for r in results for e in r.errors or () if e.extensions),
            None,
        )
        response.media_type = exchange.media_type
        allowance = meter.allowance
        headers = self.charges.headers(allowance)
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
            content_digest = exchange.digest or _digest_of(first)
            headers["etag"] = entity_tag(content_digest)
            public = exchange.identity is None
            headers["cache-control"] = cache_control(public, self.settings.cache_max_age_seconds)
            headers["vary"] = VARY
        response.raw_headers = [(name.encode(), value.encode()) for name, value in headers.items()]


VARY = "Accept, Accept-Encoding, Authorization"


def _meter(context: Context) -> Meter:
    assert context.meter is not None  # `get_context` gave it one.
    return context.meter


def _exchange(request: Request) -> Exchange:
    exchange = exchange_of(request.scope)
    assert exchange is not None  # `get_context` began it.
    return exchange


def _failed(error: ApiError) -> ExecutionResult:
    return ExecutionResult(data=None, errors=[error.as_graphql_error()])


def _is_request_error(result: ExecutionResult) -> bool:
    """No data and no error at a path: the request failed as a whole (its variables, say)."""
    return result.data is None and not any(error.path for error in result.errors or ())


def _digest_of(result: ExecutionResult) -> str:
    return digest(encode_json(result.data))
