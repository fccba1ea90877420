"""How a GraphQL answer leaves over HTTP: its body, its status and its caching headers, from its
operations' outcomes (GraphQL over HTTP's status codes for `application/graphql-response+json`;
429, 504; an ETag and surrogate keys for a successful GET query, which caches may share only if
it is anonymous and not of the caller's own: schema.caller.per_caller)."""

from typing import Any

from strawberry.types import ExecutionResult

from api_errors import ApiError
from request_limits import Allowance
from schema import Context, digest, encode_json
from server.exchange import Exchange
from server.graphql.request import GRAPHQL_RESPONSE
from server.http_caching import cache_control, cache_tags, entity_tag

VARY = "Accept, Accept-Encoding, Authorization"


def failed(error: ApiError) -> ExecutionResult:
    return ExecutionResult(data=None, errors=[error.as_graphql_error()])


def is_request_error(result: ExecutionResult) -> bool:
    """No data and no error at a path: the request failed as a whole (its variables, say)."""
    return result.data is None and not any(error.path for error in result.errors or ())


def result_document(result: ExecutionResult) -> dict[str, Any]:
    """The operation's response: its errors, its data (none for a request error), its cost."""
    document: dict[str, Any] = {}
    if result.errors:
        document["errors"] = [error.formatted for error in result.errors]
    if not is_request_error(result):
        document["data"] = result.data
    if result.extensions:
        document["extensions"] = result.extensions
    return document


def outcome(
    method: str,
    exchange: Exchange,
    context: Context,
    allowance: Allowance | None,
    results: list[ExecutionResult],
    batched: bool,
    max_age: int,
) -> tuple[int, dict[str, str]]:
    """The response's status and its caching headers; the exchange notes its first code.
    `context` is the request's: what its operation read, whether it was the caller's own."""
    exchange.code = next(
        (e.extensions.get("code") for r in results for e in r.errors or () if e.extensions),
        None,
    )
    headers = {"cache-control": "no-store"}
    first = results[0]
    if allowance is not None and not allowance.allowed:
        status = 429
        headers["retry-after"] = str(allowance.retry_after)
    elif exchange.timed_out:
        status = 504
    elif not batched and exchange.media_type == GRAPHQL_RESPONSE and is_request_error(first):
        status = 400
    else:
        status = 200
    if not batched and method == "GET" and first.data is not None and not first.errors:
        headers["etag"] = entity_tag(exchange.digest or digest(encode_json(first.data)))
        # Caches may share an anonymous answer not of the caller's own (its budget, say:
        # schema.extensions.answer_reuse notes it in the context).
        shared = exchange.identity is None and not context.own
        headers["cache-control"] = cache_control(shared, max_age)
        headers["vary"] = VARY
        reads = exchange.reads if exchange.reads is not None else frozenset(context.read)
        headers |= cache_tags(reads)
    return status, headers
