"""Reading GraphQL requests off HTTP, as the GraphQL-over-HTTP spec describes.

GET carries one request in the query string (`query`, `variables`, `operationName`,
`extensions`, `documentId`; JSON where the value is an object). POST carries a JSON object, or
a JSON array of them (a batch). Anything else is refused with a status and a clear message.
"""

from dataclasses import dataclass
from functools import cached_property
from typing import Any, TypeVar

import orjson
from starlette.requests import Request

from server.errors import HTTPRefusal
from server.json import encode_json

JSON_BODY_TYPES = ("application/json",)
GRAPHQL_RESPONSE = "application/graphql-response+json"
JSON = "application/json"

T = TypeVar("T")


@dataclass(frozen=True)
class GraphQLRequest:
    query: str | None
    variables: dict[str, Any] | None
    operation_name: str | None
    extensions: dict[str, Any] | None
    document_id: str | None

    @cached_property
    def canonical_variables(self) -> bytes:
        return encode_json(self.variables or {}, sort_keys=True)


async def read_requests(request: Request) -> tuple[list[GraphQLRequest], bool]:
    """The requests the HTTP request carries, and whether they came as a batch."""
    if request.method == "GET":
        params = request.query_params
        fields: dict[str, Any] = {
            name: params[name]
            for name in ("query", "operationName", "documentId")
            if name in params
        }
        for name in ("variables", "extensions"):
            if name in params:
                fields[name] = _json(params[name].encode(), f"`{name}`")
        return [_graphql_request(fields)], False

    content_type = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if content_type not in JSON_BODY_TYPES:
        raise HTTPRefusal(
            415,
            "Send the GraphQL request as JSON with `Content-Type: application/json`"
            f" (got {content_type or 'no content type'!r}).",
        )
    body = await request.body()
    if not body.strip():
        raise HTTPRefusal(
            400, 'The request body is empty: send a JSON object like {"query": "{ ... }"}.'
        )
    value = _json(body, "The request")
    if isinstance(value, list):
        if not value:
            raise HTTPRefusal(400, "The batch is empty: send at least one request in the array.")
        items = [_object(item, f" at batch item {i}") for i, item in enumerate(value)]
        return [_graphql_request(item) for item in items], True
    return [_graphql_request(_object(value, ""))], False


def response_media_type(accept: str | None) -> str:
    """The response type the client prefers: graphql-response+json only if it names it.

    No `Accept` header, or only wildcards, means JSON: the spec keeps legacy clients on JSON
    during its move to the new type.
    """
    if accept is None or not accept.strip():
        return JSON
    ranges = [_media_range(item) for item in accept.split(",")]
    new, legacy = _quality(ranges, GRAPHQL_RESPONSE), _quality(ranges, JSON)
    if max(new[0], legacy[0]) <= 0:
        raise HTTPRefusal(
            406, f"This API answers with {GRAPHQL_RESPONSE} or {JSON}; the request accepts neither."
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


def _graphql_request(fields: dict[str, Any]) -> GraphQLRequest:
    query = _optional(fields, "query", str)
    document_id = _optional(fields, "documentId", str)
    extensions = _optional(fields, "extensions", dict)
    if query is None and document_id is None and not (extensions or {}).get("persistedQuery"):
        raise HTTPRefusal(400, "No GraphQL query found in the request: send `query`.")
    return GraphQLRequest(
        query=query,
        variables=_optional(fields, "variables", dict),
        operation_name=_optional(fields, "operationName", str),
        extensions=extensions,
        document_id=document_id,
    )


def _optional(fields: dict[str, Any], name: str, kind: type[T]) -> T | None:
    value = fields.get(name)
    if value is None or isinstance(value, kind):
        return value
    expected = "a string" if kind is str else "an object"
    raise HTTPRefusal(400, f"`{name}` must be {expected}, not {type(value).__name__}.")


def _json(data: bytes, what: str) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as error:
        raise HTTPRefusal(400, f"{what} is not valid JSON: {error}.") from error


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        preview = orjson.dumps(value)[:40].decode(errors="replace")
        raise HTTPRefusal(
            400, f"Expected a JSON object{where}, got {type(value).__name__}: {preview}."
        )
    return value
