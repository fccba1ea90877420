"""How a GraphQL answer leaves over HTTP: its body, its status and its caching headers, from its
operations' outcomes (GraphQL over HTTP's status codes for `application/graphql-response+json`;
429, 504; an ETag and surrogate keys for a successful GET query, which caches may share only if
it is anonymous and not of the caller's own: schema.caller.per_caller). A query's answer says
how fresh it is (`extensions.freshness`: the change it reflects, and whether it is stale), and
a stale one carries its `Age` (server.graphql.operations serves one within the bound)."""

from typing import Any

from strawberry.types import ExecutionResult

from api_errors import ApiError
from request_limits import Allowance
from schema import Answered, Context, digest, encode_change_cursor, encode_json
from server.exchange import Exchange
from server.graphql.request import GRAPHQL_RESPONSE
from server.http_caching import age, cache_control, cache_tags, entity_tag

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


def freshness(answered: Answered) -> dict[str, Any]:
    """`extensions.freshness`: the cursor of the change the answer reflects (as the change feed
    gives it), whether it is stale, and if so, by how many seconds past the change it misses."""
    report: dict[str, Any] = {
        "cursor": encode_change_cursor(answered.reflects),
        "stale": answered.stale_seconds is not None,
    }
    if answered.stale_seconds is not None:
        report["age"] = round(answered.stale_seconds, 3)
    return report


def with_freshness(context: Context, result: ExecutionResult) -> ExecutionResult:
    """A query's answer with its `extensions.freshness` (a mutation's, a refusal's: as it is)."""
    if context.answered is not None and result.data is not None:
        result.extensions = {**(result.extensions or {}), "freshness": freshness(context.answered)}
    return result


def outcome(
    method: str,
    exchange: Exchange,
    context: Context,
    allowance: Allowance | None,
    results: list[ExecutionResult],
    batched: bool,
    max_age: int,
    stale_bound: float = 0,
) -> tuple[int, dict[str, str]]:
    """The response's status and its caching headers; the exchange notes its first code.
    `context` is the request's: what its operation read, whether it was the caller's own, how
    fresh its answer is. `stale_bound`: ALMANAC_MAX_STALENESS_SECONDS."""
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
        headers["cache-control"] = cache_control(shared, max_age, stale_bound)
        headers["vary"] = VARY
        reads = exchange.reads if exchange.reads is not None else frozenset(context.read)
        headers |= cache_tags(reads)
    answered = context.answered
    if not batched and first.data is not None and answered and answered.stale_seconds is not None:
        headers["age"] = age(answered.stale_seconds)
    return status, headers
