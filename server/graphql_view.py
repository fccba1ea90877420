"""`/graphql`: Strawberry's GraphQL-over-HTTP view, with the almanac's refusals and GraphiQL."""

from typing import Any

import orjson
from cross_web import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send
from strawberry.asgi import GraphQL
from strawberry.http import GraphQLHTTPResponse, process_result
from strawberry.http.parse_content_type import parse_content_type
from strawberry.schema.exceptions import InvalidOperationTypeError
from strawberry.types import ExecutionResult

from schema import Context, new_context
from schema.errors import with_code
from server.api_keys import InvalidCredentials, authenticate
from server.errors import http_error
from server.graphiql import graphiql_page
from server.json import encode_json
from server.response_cache import ResponseCache
from server.settings import Settings

JSON_BODY_TYPES = ("application/json",)


class BodyTooLarge(Exception):
    pass


class AlmanacGraphQL(GraphQL[Context, None]):
    def __init__(self, schema: Any, settings: Settings, answers: ResponseCache | None) -> None:
        super().__init__(
            schema,
            graphql_ide="graphiql",
            allow_queries_via_get=True,
            multipart_uploads_enabled=False,
            subscription_protocols=(),
        )
        self.settings = settings
        self.answers = answers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        limit = self.settings.max_body_bytes
        too_large = (
            f"The request body is larger than this server accepts ({limit} bytes). "
            "Send a smaller request."
        )
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            await http_error(413, too_large)(scope, receive, send)
            return
        request = Request(scope, _limited(receive, limit))
        try:
            request.state.identity = await authenticate(
                request.app.state.store, request.headers.get("authorization")
            )
            response = await self.answer(request)
        except InvalidCredentials as error:
            response = http_error(
                401, str(error), headers={"WWW-Authenticate": 'Bearer realm="almanac"'}
            )
        except HTTPException as error:
            response = http_error(error.status_code, error.reason)
        except BodyTooLarge:
            response = http_error(413, too_large)
        await response(scope, receive, send)

    async def answer(self, request: Request) -> Response:
        """Run the request, or reuse the answer to the same request if the data is unchanged."""
        if self.answers is None or request.method not in ("GET", "POST"):
            return await self.run(request)
        version = request.app.state.store.version.current
        key = (
            request.method,
            request.headers.get("accept", "").encode(),
            request.scope["query_string"],
            await request.body(),
        )
        if cached := self.answers.get(key, version):
            return Response(cached.body, media_type=cached.media_type)
        response = await self.run(request)
        context = getattr(request.state, "context", None)
        if response.status_code == 200 and context is not None and context.reusable:
            self.answers.put(key, version, bytes(response.body), response.media_type or "")
        return response

    async def execute_single(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return await super().execute_single(*args, **kwargs)
        except HTTPException as error:
            # GraphQL over HTTP: an operation that GET may not carry is 405, not 400.
            if isinstance(error.__cause__, InvalidOperationTypeError):
                raise HTTPException(
                    405, "Mutations must be sent with POST; GET carries queries only."
                ) from error
            raise

    async def get_context(self, request: Any, response: Any) -> Context:
        context = new_context(request.app.state.store, request, request.state.identity)
        request.state.context = context
        return context

    async def render_graphql_ide(self, request: Request) -> Response:
        return graphiql_page(self.settings.graphiql_packages)

    async def parse_http_body(self, request: Any) -> Any:
        if request.method == "POST":
            content_type, _ = parse_content_type(request.content_type or "")
            if content_type not in JSON_BODY_TYPES:
                raise HTTPException(
                    415,
                    "Send the GraphQL request as JSON with `Content-Type: application/json`"
                    f" (got {content_type or 'no content type'!r}).",
                )
            if not (await request.get_body()).strip():
                raise HTTPException(
                    400, 'The request body is empty: send a JSON object like {"query": "{ ... }"}.'
                )
        return await super().parse_http_body(request)

    def parse_json(self, data: str | bytes) -> Any:
        try:
            value = orjson.loads(data)
        except orjson.JSONDecodeError as error:
            raise HTTPException(400, f"The request is not valid JSON: {error}.") from error
        if not isinstance(value, dict | list):
            raise HTTPException(
                400, f"Expected a JSON object, got {type(value).__name__}: {_preview(data)}."
            )
        return value

    async def process_result(
        self, request: Request, result: ExecutionResult
    ) -> GraphQLHTTPResponse:
        if result.errors:
            result.errors = [with_code(error) for error in result.errors]
        return process_result(result)

    def encode_json(self, data: object) -> bytes:
        return encode_json(data)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            return int(value) if value.isdigit() else None
    return None


def _limited(receive: Receive, limit: int) -> Receive:
    """`receive`, refusing a body (even one sent without a length) beyond `limit` bytes."""
    received = 0

    async def receive_within_limit() -> Message:
        nonlocal received
        message = await receive()
        received += len(message.get("body", b""))
        if received > limit:
            raise BodyTooLarge
        return message

    return receive_within_limit


def _preview(data: str | bytes) -> str:
    text = data if isinstance(data, str) else data.decode(errors="replace")
    return text[:40]
