"""`/graphql`: GraphQL over HTTP, with the almanac's limits, persisted queries and caching.

A request's path: body size limit → credentials → the GraphQL request(s) read off HTTP → for
each operation, its document (sent, or persisted) is checked and costed before anything runs
(request_limits/) → the client's budget is charged once for the whole request → each operation runs
under the deadline, or reuses the answer computed for the same data → one response with each
operation's cost, the budget left in the rate-limit headers, and for a GET query an ETag.
"""

import asyncio
import logging
import sys
from dataclasses import dataclass, field, replace
from typing import Any

from graphql import DocumentNode, GraphQLError, OperationType, get_operation_ast
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from request_limits.bounded_cache import BoundedCache
from request_limits.budgets import Allowance, Budgets
from request_limits.cost import REFUSED_COST, SliceOutOfRange, query_cost
from request_limits.document import DocumentChecker, DocumentRefused
from schema import Context, Identity, new_context, schema
from schema.errors import (
    BAD_USER_INPUT,
    BATCH_TOO_LARGE,
    GRAPHQL_VALIDATION_FAILED,
    MAX_COST_EXCEEDED,
    THROTTLED,
    TIMEOUT,
    with_code,
)
from server.api_keys import InvalidCredentials, authenticate
from server.errors import HTTPRefusal
from server.graphiql import graphiql_page
from server.graphql_request import (
    GRAPHQL_RESPONSE,
    JSON,
    GraphQLRequest,
    read_requests,
    response_media_type,
)
from server.http_caching import cache_control, content_coding, encoded, entity_tag, matches
from server.json import encode_json
from server.persisted_queries import PersistedQueries, PersistedQueryError
from server.response_cache import OperationKey, ResponseCache
from server.settings import Settings

log = logging.getLogger("almanac")

WWW_AUTHENTICATE = {"WWW-Authenticate": 'Bearer realm="almanac"'}


class BodyTooLarge(Exception):
    pass


@dataclass
class Operation:
    """One GraphQL request of the HTTP request, as checked before anything runs."""

    request: GraphQLRequest
    text: str = ""
    document: DocumentNode | None = None
    kind: OperationType | None = None
    cost: int = REFUSED_COST  # what the operation is charged: its cost once checked
    refusal: list[GraphQLError] | None = None

    @property
    def key(self) -> OperationKey:
        """What identifies the operation: its answer and its cost depend on nothing else."""
        return (self.text, self.request.operation_name, self.request.canonical_variables)


@dataclass
class Outcome:
    """What one operation gives the response."""

    cost: int
    data: bytes | None = None  # encoded JSON; None when the operation did not run
    errors: list[GraphQLError] = field(default_factory=list)
    timed_out: bool = False

    @property
    def cacheable(self) -> bool:
        return self.data is not None and not self.errors


@dataclass(frozen=True)
class Services:
    """What the endpoint shares across requests (built once per app, see server.app)."""

    budgets: Budgets
    persisted: PersistedQueries
    answers: ResponseCache | None


class GraphQLEndpoint:
    def __init__(self, settings: Settings, services: Services) -> None:
        self.settings = settings
        self.services = services
        self.documents = DocumentChecker(
            schema._schema, settings.document_limits, settings.document_cache_bytes
        )
        # A cost depends on the document, the operation and the variables only: computing it
        # takes longer than reusing a whole answer, so repeated requests reuse it too.
        self.costs: BoundedCache[OperationKey, int] = BoundedCache(
            settings.cost_cache_bytes, sys.getsizeof
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        limit = self.settings.max_body_bytes
        too_large = (
            f"The request body is larger than this server accepts ({limit} bytes). "
            "Send a smaller request."
        )
        request = Request(scope, _limited(receive, limit))
        try:
            declared = _content_length(scope)
            if declared is not None and declared > limit:
                raise HTTPRefusal(413, too_large)
            response = await self.respond(request)
        except HTTPRefusal as refusal:
            response = await self.refused(request, refusal)
        except BodyTooLarge:
            response = await self.refused(request, HTTPRefusal(413, too_large))
        except ClientDisconnect:
            return  # Gone (or let go for a body too slow): there is no one to answer.
        await response(scope, receive, send)

    async def respond(self, request: Request) -> Response:
        if request.method == "GET" and _wants_graphiql(request):
            return graphiql_page(self.settings.graphiql_packages)
        media_type = response_media_type(request.headers.get("accept"))
        identity = await self.identify(request)
        requests, batched = await read_requests(request)
        if batched and len(requests) > self.settings.max_batch:
            raise HTTPRefusal(
                400,
                f"The batch holds {len(requests)} operations; the most allowed is "
                f"{self.settings.max_batch}.",
                code=BATCH_TOO_LARGE,
            )
        may_run_any = identity is not None and identity.is_admin
        operations = [await self.checked(r, request.method, may_run_any) for r in requests]
        total = sum(operation.cost for operation in operations)
        if batched and total > self.settings.max_query_cost:
            raise HTTPRefusal(
                400,
                f"The batch costs {total} points together; the most one request may cost is "
                f"{self.settings.max_query_cost}.",
                code=MAX_COST_EXCEEDED,
            )

        allowance = await self.charge(request, identity, total)
        headers = _rate_limit_headers(allowance)
        if not allowance.allowed:
            costs = [operation.cost for operation in operations]
            return self.throttled(costs, allowance, batched, media_type, headers)

        deadline = asyncio.get_running_loop().time() + self.settings.request_timeout_seconds
        outcomes = [
            await self.run(operation, request, identity, deadline) for operation in operations
        ]
        bodies = [self.body(outcome, allowance) for outcome in outcomes]
        if not batched and request.method == "GET" and outcomes[0].cacheable:
            return self.cacheable(request, identity, outcomes[0], bodies[0], media_type, headers)
        headers["Cache-Control"] = "no-store"
        if batched:
            return Response(b"[" + b",".join(bodies) + b"]", 200, headers, media_type)
        return Response(bodies[0], _status(outcomes[0], media_type), headers, media_type)

    async def identify(self, request: Request) -> Identity | None:
        try:
            identity = await authenticate(
                request.app.state.store, request.headers.get("authorization")
            )
        except InvalidCredentials as error:
            raise HTTPRefusal(401, str(error), WWW_AUTHENTICATE) from error
        if identity is None and not self.settings.anonymous_access:
            raise HTTPRefusal(
                401,
                "This API needs an API key: send `Authorization: Bearer <key>`.",
                WWW_AUTHENTICATE,
            )
        request.state.identity = identity
        return identity

    async def refused(self, request: Request, refusal: HTTPRefusal) -> Response:
        """A request refused over HTTP is charged like a refused operation, or throttled."""
        identity = getattr(request.state, "identity", None)
        allowance = await self.charge(request, identity, REFUSED_COST)
        headers = _rate_limit_headers(allowance)
        if not allowance.allowed:
            return self.throttled([REFUSED_COST], allowance, False, JSON, headers)
        extensions = {"cost": self.cost_report(REFUSED_COST, allowance)}
        return refusal.response(extensions, headers)

    async def checked(self, graphql: GraphQLRequest, method: str, may_run_any: bool) -> Operation:
        """The operation with its checked document and cost, or with why it may not run."""
        operation = Operation(graphql)
        try:
            operation.text = await self.services.persisted.document_text(
                graphql.query, graphql.extensions, graphql.document_id, may_run_any
            )
            operation.document = self.documents.check(operation.text)
        except PersistedQueryError as error:
            operation.refusal = [GraphQLError(str(error), extensions={"code": error.code})]
            return operation
        except DocumentRefused as refused:
            operation.refusal = refused.errors
            return operation

        definition = get_operation_ast(operation.document, graphql.operation_name)
        if definition is None:
            message = (
                f'Unknown operation named "{graphql.operation_name}".'
                if graphql.operation_name
                else "The document holds several operations: name one in `operationName`."
            )
            operation.refusal = [
                GraphQLError(message, extensions={"code": GRAPHQL_VALIDATION_FAILED})
            ]
            return operation
        operation.kind = definition.operation
        if method == "GET" and operation.kind is not OperationType.QUERY:
            raise HTTPRefusal(405, "Mutations must be sent with POST; GET carries queries only.")

        key = operation.key
        if (cost := self.costs.get(key)) is None:
            try:
                cost = query_cost(
                    schema._schema, operation.document, graphql.operation_name, graphql.variables
                )
            except SliceOutOfRange as error:
                operation.refusal = [GraphQLError(str(error), extensions={"code": BAD_USER_INPUT})]
                return operation
            self.costs.put(key, cost)
        if cost > self.settings.max_query_cost:
            maximum = self.settings.max_query_cost
            operation.refusal = [
                GraphQLError(
                    f"The query costs {cost} points; the most a request may cost is "
                    f"{maximum}. Ask for fewer items (`first`) or fewer fields.",
                    extensions={"code": MAX_COST_EXCEEDED, "cost": cost, "maximumCost": maximum},
                )
            ]
            return operation
        operation.cost = max(REFUSED_COST, cost)
        return operation

    async def charge(self, request: Request, identity: Identity | None, cost: int) -> Allowance:
        if identity is not None:
            bucket, policy = f"key:{identity.name}", identity.budget or self.settings.key_budget
            if policy.capacity < self.settings.max_query_cost:
                # A key's own budget set below a maximum raised since: every allowed request
                # must fit the bucket, or the client would be told to retry in vain.
                policy = replace(policy, capacity=self.settings.max_query_cost)
        else:
            address = request.client.host if request.client else "unknown"
            bucket, policy = f"address:{address}", self.settings.anonymous_budget
        return await self.services.budgets.take(bucket, cost, policy)

    async def run(
        self, operation: Operation, request: Request, identity: Identity | None, deadline: float
    ) -> Outcome:
        if operation.refusal is not None:
            return Outcome(cost=operation.cost, errors=operation.refusal)
        store = request.app.state.store
        answers = self.services.answers if operation.kind is OperationType.QUERY else None
        key = (
            operation.text,
            operation.request.operation_name,
            operation.request.canonical_variables,
        )
        version = store.version.current
        if answers is not None and (data := answers.get(key, version)) is not None:
            return Outcome(cost=operation.cost, data=data)

        context: Context = new_context(store, request, identity)
        context.document = operation.document
        try:
            async with asyncio.timeout_at(deadline):
                result = await schema.execute(
                    operation.text,
                    variable_values=operation.request.variables,
                    context_value=context,
                    operation_name=operation.request.operation_name,
                )
        except TimeoutError:
            seconds = self.settings.request_timeout_seconds
            message = f"The request ran longer than {seconds:g} seconds and was stopped."
            return Outcome(
                cost=operation.cost,
                errors=[GraphQLError(message, extensions={"code": TIMEOUT})],
                timed_out=True,
            )
        variables = operation.request.variables
        errors = [with_code(error, variables) for error in result.errors or []]
        # No data and no error at a path: the request failed as a whole (its variables, say).
        request_error = result.data is None and not any(error.path for error in errors)
        outcome = Outcome(
            cost=operation.cost,
            data=None if request_error else encode_json(result.data),
            errors=errors,
        )
        if answers is not None and outcome.data is not None and not outcome.errors:
            answers.put(key, version, outcome.data)
        return outcome

    def body(self, outcome: Outcome, allowance: Allowance) -> bytes:
        parts = []
        if outcome.errors:
            parts.append(b'"errors":' + encode_json([error.formatted for error in outcome.errors]))
        if outcome.data is not None:
            parts.append(b'"data":' + outcome.data)
        cost = self.cost_report(outcome.cost, allowance)
        parts.append(b'"extensions":' + encode_json({"cost": cost}))
        return b"{" + b",".join(parts) + b"}"

    def cost_report(self, cost: int, allowance: Allowance) -> dict[str, Any]:
        return {
            "requestedQueryCost": cost,
            "maximumQueryCost": self.settings.max_query_cost,
            "throttleStatus": {
                "maximumAvailable": allowance.policy.capacity,
                "currentlyAvailable": allowance.remaining,
                "restoreRate": allowance.policy.restore_rate,
            },
        }

    def throttled(
        self,
        costs: list[int],
        allowance: Allowance,
        batched: bool,
        media_type: str,
        headers: dict[str, str],
    ) -> Response:
        message = (
            f"This request costs {allowance.cost} points and {allowance.remaining} are left in "
            f"your budget, which refills at {allowance.policy.restore_rate:g} points a second. "
            f"Retry in {allowance.retry_after} seconds."
        )
        error = GraphQLError(message, extensions={"code": THROTTLED})
        bodies = [self.body(Outcome(cost=cost, errors=[error]), allowance) for cost in costs]
        content = b"[" + b",".join(bodies) + b"]" if batched else bodies[0]
        headers = {
            **headers,
            "Retry-After": str(allowance.retry_after),
            "Cache-Control": "no-store",
        }
        return Response(content, 429, headers, media_type)

    def cacheable(
        self,
        request: Request,
        identity: Identity | None,
        outcome: Outcome,
        body: bytes,
        media_type: str,
        headers: dict[str, str],
    ) -> Response:
        assert outcome.data is not None
        coding = content_coding(request.headers.get("accept-encoding"), len(body))
        etag = entity_tag(outcome.data, coding)
        headers = {
            **headers,
            "ETag": etag,
            "Cache-Control": cache_control(identity is None, self.settings.cache_max_age_seconds),
            "Vary": "Accept, Accept-Encoding, Authorization",
        }
        if matches(request.headers.get("if-none-match"), etag):
            return Response(status_code=304, headers=headers)
        if coding is not None:
            headers["Content-Encoding"] = coding
        return Response(encoded(body, coding), 200, headers, media_type)


def _status(outcome: Outcome, media_type: str) -> int:
    """GraphQL over HTTP: a request error (no data) is 4xx in the new media type only."""
    if outcome.timed_out:
        return 504
    if media_type == GRAPHQL_RESPONSE and outcome.data is None:
        return 400
    return 200


def _rate_limit_headers(allowance: Allowance) -> dict[str, str]:
    return {
        "RateLimit-Limit": str(allowance.policy.capacity),
        "RateLimit-Remaining": str(allowance.remaining),
        "RateLimit-Reset": str(allowance.reset_after),
    }


def _wants_graphiql(request: Request) -> bool:
    if "text/html" not in request.headers.get("accept", ""):
        return False
    params = request.query_params
    return not any(name in params for name in ("query", "extensions", "documentId"))


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
