"""How a GraphQL answer leaves over HTTP: its body, its status and its caching headers, from its
operations' outcomes (GraphQL over HTTP's status codes for `application/graphql-response+json`;
429, 504; an ETag and surrogate keys for a successful GET query, which caches may share only if
it is anonymous and not of the caller's own: schema.caller.per_caller). A query's answer says
how fresh it is (`extensions.freshness`: the change it reflects, and whether it is stale), and
a stale one carries its `Age` (server.graphql.operations serves one within the bound)."""

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import orjson
from graphql import GraphQLError
from starlette.responses import Response
from strawberry.types import ExecutionResult

from api_errors import ApiError, ErrorCode
from request_limits import Allowance
from schema import Answered, digest, encode_change_cursor, encode_json
from server.exchange import Exchange
from server.graphql.request import GRAPHQL_RESPONSE
from server.http_caching import age, cache_control, cache_tags, entity_tag
from server.min_change import CHANGE_CURSOR_HEADER, ChangeNotReached

VARY = "Accept, Accept-Encoding, Authorization"


def failed(error: ApiError) -> ExecutionResult:
    return ExecutionResult(data=None, errors=[error.as_graphql_error()])


def refused(
    exchange: Exchange, refusal: ApiError | GraphQLError | TimeoutError, timeout_seconds: float
) -> ExecutionResult:
    """An operation refused (or stopped at the request's deadline), as its result; a refusal
    for the minimum change not reached, or the deadline, ends the request as timed out."""
    if isinstance(refusal, GraphQLError):  # the parser's refusal
        return ExecutionResult(data=None, errors=[refusal])
    if isinstance(refusal, ApiError):
        exchange.timed_out = exchange.timed_out or isinstance(refusal, ChangeNotReached)
        return failed(refusal)
    exchange.timed_out = True
    message = f"The request ran longer than {timeout_seconds:g} seconds and was stopped."
    return failed(ApiError(message, code=ErrorCode.TIMEOUT))


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


@lru_cache(maxsize=64)  # most answers reflect the same newest change: encoded once for them
def cursor_of(sequence: int) -> str:
    return encode_change_cursor(sequence)


def freshness(answered: Answered) -> dict[str, Any]:
    """`extensions.freshness`: the cursor of the change the answer reflects (as the change feed
    gives it), whether it is stale, and if so, by how many seconds past the change it misses."""
    report: dict[str, Any] = {
        "cursor": cursor_of(answered.reflects),
        "stale": answered.stale_seconds is not None,
    }
    if answered.stale_seconds is not None:
        report["age"] = round(answered.stale_seconds, 3)
    return report


def with_freshness(answered: Answered | None, result: ExecutionResult) -> ExecutionResult:
    """A query's answer with its `extensions.freshness` (a mutation's, a refusal's: as it is)."""
    if answered is not None and result.data is not None:
        result.extensions = {**(result.extensions or {}), "freshness": freshness(answered)}
    return result


@dataclass(frozen=True)
class Outcome:
    """What the response's caching headers are made from, beyond its results: what the
    request's operation read, whether it was the caller's own, how fresh its answer is, the
    budget's allowance, and the settings' max-age and staleness bound."""

    own: bool
    read: Iterable[str]
    answered: Answered | None
    allowance: Allowance | None
    max_age: int
    stale_bound: float = 0


def outcome(
    method: str,
    exchange: Exchange,
    results: list[ExecutionResult],
    batched: bool,
    of: Outcome,
) -> tuple[int, dict[str, str]]:
    """The response's status and its caching headers; the exchange notes its first code.
    `of.stale_bound`: ALMANAC_MAX_STALENESS_SECONDS."""
    exchange.code = next(
        (e.extensions.get("code") for r in results for e in r.errors or () if e.extensions),
        None,
    )
    headers = {"cache-control": "no-store"}
    first, allowance = results[0], of.allowance
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
        shared = exchange.identity is None and not of.own
        headers["cache-control"] = cache_control(shared, of.max_age, of.stale_bound)
        headers["vary"] = VARY
        reads = exchange.reads if exchange.reads is not None else frozenset(of.read)
        headers |= cache_tags(reads)
    answered = of.answered
    if not batched and first.data is not None and answered and answered.stale_seconds is not None:
        headers["age"] = age(answered.stale_seconds)
    return status, headers


def http_response(
    method: str,
    exchange: Exchange,
    results: list[ExecutionResult],
    batched: bool,
    outcome_of: Outcome,
    budget_headers: dict[str, str],
    changed: int | None,
) -> Response:
    """The response of a GraphQL request over HTTP: its operations' documents, the status and
    headers their outcomes call for (`outcome`), the budget's headers, and the newest change
    the request made (`changed`) as its `Almanac-Change-Cursor`."""
    status, caching = outcome(method, exchange, results, batched, outcome_of)
    documents = [result_document(result) for result in results]
    body = orjson.dumps(documents if batched else documents[0])
    response = Response(body, status, None, exchange.media_type)
    headers = {**budget_headers, **caching}
    response.raw_headers.extend((name.encode(), value.encode()) for name, value in headers.items())
    if changed is not None:  # the request changed something
        response.headers[CHANGE_CURSOR_HEADER] = cursor_of(changed)
    return response
