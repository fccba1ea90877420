"""Reading GraphQL requests off HTTP, as the GraphQL-over-HTTP spec describes.

GET carries one request in the query string (`query`, `variables`, `operationName`,
`extensions`, `documentId`; JSON where the value is an object). POST carries a JSON object, or
a JSON array of them (a batch). Anything else is refused with a status and a clear message.
A `documentId: "sha256:<hash>"` is read as the persisted query of that hash; any other
`documentId` names a trusted document by its id in the manifest (Relay's, say).

A body is held to the size limit as it is read (`limited`), and one that declares itself too
long is refused before any of it is read (`declared_too_large`). (Starlette's
RequestBodyLimitMiddleware answers a body declared too long with its own plain-text 413,
whatever the app answers: this API's refusals are GraphQL-shaped.)
"""

import sys
from typing import Any, TypeVar

import orjson
from cross_web import AsyncHTTPRequestAdapter
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.types import Message, Receive, Scope
from strawberry.http import GraphQLRequestData

from api_errors import ApiError
from request_limits import BoundedCache
from server.graphql.multipart import MULTIPART, multipart_fields
from server.graphql.persisted import DOCUMENT_ID, requested_hash

MAX_JSON_DEPTH = 32
"""How deep arrays and objects may nest in the JSON a request carries (its body; GET's
`variables` and `extensions`): the deepest input the schema takes is some 6 levels down. Deeper
JSON is refused before any work (docs/partners.md), as nothing downstream (the answer-reuse
key's encoder stops at 254 levels, Python's recursion at about 1,000) need ever meet it."""
JSON_BODY_TYPES = ("application/json",)
GRAPHQL_RESPONSE = "application/graphql-response+json"
JSON = "application/json"

COMMON_JSON = frozenset({"application/json", "*/*"})
"""What most clients send, read without parsing: JSON."""

T = TypeVar("T")


class BodyTooLarge(Exception):
    pass


def too_large(limit: int) -> ApiError:
    """The refusal of a body over `limit` bytes."""
    message = (
        f"The request body is larger than this server accepts ({limit} bytes). "
        "Send a smaller request."
    )
    return ApiError(message, status=413)


def declared_too_large(scope: Scope, limit: int) -> bool:
    """Whether the request says (`Content-Length`) that its body is over `limit` bytes."""
    declared = declared_length(scope)
    return declared is not None and declared > limit


def declared_length(scope: Scope) -> int | None:
    """The body's length as the request declares it (`Content-Length`), if it does."""
    for name, value in scope["headers"]:
        if name == b"content-length":
            return int(value) if value.isdigit() else None
    return None


def body_limited(scope: Scope, receive: Receive, limit: int) -> Request:
    """The request, its body held to `limit` bytes (`limited`); one that declares a longer
    body is refused at once (`BodyTooLarge`)."""
    if declared_too_large(scope, limit):
        raise BodyTooLarge
    return Request(scope, limited(receive, limit, scope))


def limited(receive: Receive, limit: int, scope: Scope | None = None) -> Receive:
    """`receive`, refusing a body (even one sent without a length) beyond `limit` bytes. A body
    whose length `scope` declares within the limit, and that is not also sent chunked, is read
    through `receive` itself: the server's parser delivers no more of a request's body than its
    `Content-Length`. (With both headers a parser may follow `Transfer-Encoding`, as h11 does,
    and deliver a body of any length: it is counted.)"""
    if (
        scope is not None
        and (declared := declared_length(scope)) is not None
        and declared <= limit
        and not any(name == b"transfer-encoding" for name, _ in scope["headers"])
    ):
        return receive
    received = 0

    async def receive_within_limit() -> Message:
        nonlocal received
        message = await receive()
        received += len(message.get("body", b""))
        if received > limit:
            raise BodyTooLarge
        return message

    return receive_within_limit


DECODED_QUERY_STRINGS_BYTES = 1 << 20
"""The most the GET requests' decoded query strings kept hold (each at most an eighth)."""


def _params_size(params: QueryParams) -> int:
    return sum(sys.getsizeof(name) + sys.getsizeof(value) for name, value in params.multi_items())


_decoded: BoundedCache[bytes, QueryParams] = BoundedCache(DECODED_QUERY_STRINGS_BYTES, _params_size)


def query_params(query_string: bytes) -> QueryParams:
    """A GET request's parameters, decoded once for each query string: a repeated GET (a
    page's, as a cache in front or a client sends it again) is not percent-decoded again,
    which costs more than the rest of its warm path."""
    params = _decoded.get(query_string)
    if params is None:
        params = QueryParams(query_string)
        _decoded.put(query_string, params)
    return params


async def read_requests(
    request: AsyncHTTPRequestAdapter, query_string: bytes | None = None
) -> GraphQLRequestData | list[GraphQLRequestData]:
    """The request the HTTP request carries, or the batch of them; a GET's parameters from
    its `query_string` if given (decoded once for each: `query_params`)."""
    if request.method == "GET":
        params = request.query_params if query_string is None else query_params(query_string)
        fields: dict[str, Any] = {
            name: params[name]
            for name in ("query", "operationName", "documentId")
            if isinstance(params.get(name), str)
        }
        for name in ("variables", "extensions"):
            if isinstance(value := params.get(name), str):
                fields[name] = _json(value.encode(), f"`{name}`")
        return _graphql_request(fields)

    content_type = (request.content_type or "").partition(";")[0].strip().lower()
    if content_type == MULTIPART:  # files sent by the GraphQL multipart request spec
        return _graphql_request(await multipart_fields(request, _shallow))
    if content_type not in JSON_BODY_TYPES:
        raise ApiError(
            "Send the GraphQL request as JSON with `Content-Type: application/json`"
            f" (got {content_type or 'no content type'!r}).",
            status=415,
        )
    body = await request.get_body()
    if not body.strip():
        raise ApiError(
            'The request body is empty: send a JSON object like {"query": "{ ... }"}.', status=400
        )
    value = _json(body if isinstance(body, bytes) else body.encode(), "The request")
    if isinstance(value, list):
        if not value:
            raise ApiError(
                "The batch is empty: send at least one request in the array.", status=400
            )
        items = [_object(item, f" at batch item {i}") for i, item in enumerate(value)]
        return [_graphql_request(item) for item in items]
    return _graphql_request(_object(value, ""))


def response_media_type(accept: str | None) -> str:
    """The response type the client prefers: graphql-response+json only if it names it.

    No `Accept` header, or only wildcards, means JSON: the spec keeps legacy clients on JSON
    during its move to the new type.
    """
    if accept is None or accept in COMMON_JSON or not accept.strip():
        return JSON
    ranges = [_media_range(item) for item in accept.split(",")]
    new, legacy = _quality(ranges, GRAPHQL_RESPONSE), _quality(ranges, JSON)
    if max(new[0], legacy[0]) <= 0:
        raise ApiError(
            f"This API answers with {GRAPHQL_RESPONSE} or {JSON}; the request accepts neither.",
            status=406,
        )
    return GRAPHQL_RESPONSE if new > legacy else JSON


def _media_range(item: str) -> tuple[str, float]:
    media_range, *parameters = (part.strip() for part in item.split(";"))
    quality = 1.0
    for parameter in parameters:
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "q":
            try:
                quality = float(value)
            except ValueError:
                quality = 0.0
    return media_range.lower(), quality


def _quality(ranges: list[tuple[str, float]], offered: str) -> tuple[float, int]:
    """How much the client wants `offered`: the quality of its most specific matching range,
    and that specificity (2 named, 1 `type/*`, 0 `*/*`)."""
    best = (0.0, -1)
    kind = offered.partition("/")[0]
    for media_range, quality in ranges:
        specificity = {offered: 2, f"{kind}/*": 1, "*/*": 0}.get(media_range, -1)
        if specificity > best[1]:
            best = (quality, specificity)
    return best


def _graphql_request(fields: dict[str, Any]) -> GraphQLRequestData:
    query = _optional(fields, "query", str)
    extensions = _optional(fields, "extensions", dict)
    if (document_id := _optional(fields, "documentId", str)) is not None:
        if not document_id:
            raise ApiError("`documentId` must name a document.", status=400)
        scheme, colon, digest = document_id.partition(":")
        if not colon:  # an id of a client's manifest (Relay's), as its trusted documents hold it
            extensions = {**(extensions or {}), DOCUMENT_ID: document_id}
        elif scheme == "sha256" and digest:
            persisted = {"version": 1, "sha256Hash": digest}
            extensions = {**(extensions or {}), "persistedQuery": persisted}
        else:
            raise ApiError(
                '`documentId` must read "sha256:<hex digest>", or be the id a trusted '
                "documents' manifest gives.",
                status=400,
            )
    if query is None and requested_hash(extensions) is None and document_id is None:
        raise ApiError("No GraphQL query found in the request: send `query`.", status=400)
    return GraphQLRequestData(
        query=query,
        variables=_optional(fields, "variables", dict),
        operation_name=_optional(fields, "operationName", str),
        extensions=extensions,
    )


def _optional(fields: dict[str, Any], name: str, kind: type[T]) -> T | None:
    value = fields.get(name)
    if value is None or isinstance(value, kind):
        return value
    expected = "a string" if kind is str else "an object"
    raise ApiError(f"`{name}` must be {expected}, not {type(value).__name__}.", status=400)


def _json(data: bytes, what: str) -> Any:
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as error:
        raise ApiError(f"{what} is not valid JSON: {error}.", status=400) from error
    return _shallow(value, what)


def _shallow(value: T, what: str) -> T:
    """`value`, if it nests no deeper than `MAX_JSON_DEPTH`: a multipart request's
    `operations` too, which is the body a JSON request would send."""
    if _nests_deeper(value, MAX_JSON_DEPTH):
        raise ApiError(
            f"{what} nests arrays and objects more than {MAX_JSON_DEPTH} levels deep, the most "
            "this API reads.",
            status=400,
        )
    return value


def _nests_deeper(value: Any, limit: int) -> bool:
    """Whether arrays and objects nest more than `limit` levels deep in `value`, walked a level
    at a time (not by recursion: the value may nest a thousand levels)."""
    level = [value] if isinstance(value, dict | list) else []
    for _ in range(limit):
        if not level:
            return False
        inner = []
        for container in level:
            for child in container.values() if isinstance(container, dict) else container:
                if isinstance(child, dict | list):
                    inner.append(child)
        level = inner
    return bool(level)


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        preview = orjson.dumps(value)[:40].decode(errors="replace")
        raise ApiError(
            f"Expected a JSON object{where}, got {type(value).__name__}: {preview}.", status=400
        )
    return value
