"""The errors a client can see, in one model: a code, a message, details, and an HTTP status.

Every refusal, from a malformed HTTP request to a write that conflicts, is an `ApiError` (or a
graphql-core error given its code by `client_facing`), and is rendered the same way: as a GraphQL
error, `{"message", "extensions": {"code", ...}}`, in a GraphQL response or alone in an HTTP one.
"""

from collections.abc import Iterator, Mapping, Sequence
from enum import StrEnum
from typing import Any

import orjson
from graphql import GraphQLError, GraphQLSyntaxError
from graphql.pyutils import inspect

__all__ = [
    "CODE_OF_STATUS",
    "INTERNAL_ERROR_MESSAGE",
    "ApiError",
    "ErrorCode",
    "client_facing",
    "code_of",
    "error_document",
    "is_unexpected",
    "shown",
]


class ErrorCode(StrEnum):
    # The request as GraphQL.
    GRAPHQL_PARSE_FAILED = "GRAPHQL_PARSE_FAILED"
    GRAPHQL_VALIDATION_FAILED = "GRAPHQL_VALIDATION_FAILED"
    BAD_USER_INPUT = "BAD_USER_INPUT"
    # Limits, checked before anything runs.
    TOO_MANY_TOKENS = "TOO_MANY_TOKENS"
    FRAGMENT_CYCLE = "FRAGMENT_CYCLE"
    MAX_DEPTH_EXCEEDED = "MAX_DEPTH_EXCEEDED"
    TOO_MANY_ALIASES = "TOO_MANY_ALIASES"
    MAX_COST_EXCEEDED = "MAX_COST_EXCEEDED"
    BATCH_TOO_LARGE = "BATCH_TOO_LARGE"
    THROTTLED = "THROTTLED"
    TIMEOUT = "TIMEOUT"
    # Persisted queries and trusted documents.
    PERSISTED_QUERY_NOT_FOUND = "PERSISTED_QUERY_NOT_FOUND"
    PERSISTED_QUERY_HASH_MISMATCH = "PERSISTED_QUERY_HASH_MISMATCH"
    DOCUMENT_NOT_TRUSTED = "DOCUMENT_NOT_TRUSTED"
    # Who may do what, and writes.
    UNAUTHENTICATED = "UNAUTHENTICATED"
    FORBIDDEN = "FORBIDDEN"
    NOT_FOUND = "NOT_FOUND"
    CONFLICT = "CONFLICT"
    GONE = "GONE"
    # A change feed's cursor older than the changes still kept.
    CURSOR_EXPIRED = "CURSOR_EXPIRED"
    # A minimum change asked for (read-your-writes): beyond the log, or not applied in time.
    CHANGE_NOT_FOUND = "CHANGE_NOT_FOUND"
    CHANGE_NOT_REACHED = "CHANGE_NOT_REACHED"
    # The HTTP request itself.
    BAD_REQUEST = "BAD_REQUEST"
    METHOD_NOT_ALLOWED = "METHOD_NOT_ALLOWED"
    NOT_ACCEPTABLE = "NOT_ACCEPTABLE"
    REQUEST_TIMEOUT = "REQUEST_TIMEOUT"
    PAYLOAD_TOO_LARGE = "PAYLOAD_TOO_LARGE"
    UNSUPPORTED_MEDIA_TYPE = "UNSUPPORTED_MEDIA_TYPE"
    REQUEST_HEADER_FIELDS_TOO_LARGE = "REQUEST_HEADER_FIELDS_TOO_LARGE"
    SERVICE_UNAVAILABLE = "SERVICE_UNAVAILABLE"
    INTERNAL_SERVER_ERROR = "INTERNAL_SERVER_ERROR"


CODE_OF_STATUS = {
    400: ErrorCode.BAD_REQUEST,
    401: ErrorCode.UNAUTHENTICATED,
    403: ErrorCode.FORBIDDEN,
    404: ErrorCode.NOT_FOUND,
    405: ErrorCode.METHOD_NOT_ALLOWED,
    406: ErrorCode.NOT_ACCEPTABLE,
    410: ErrorCode.GONE,
    408: ErrorCode.REQUEST_TIMEOUT,
    413: ErrorCode.PAYLOAD_TOO_LARGE,
    415: ErrorCode.UNSUPPORTED_MEDIA_TYPE,
    429: ErrorCode.THROTTLED,
    431: ErrorCode.REQUEST_HEADER_FIELDS_TOO_LARGE,
    500: ErrorCode.INTERNAL_SERVER_ERROR,
    503: ErrorCode.SERVICE_UNAVAILABLE,
    504: ErrorCode.TIMEOUT,
}

INTERNAL_ERROR_MESSAGE = "Internal server error: the request could not be completed. It was logged."


class ApiError(Exception):
    """An error the client caused and can fix; its message is shown as it is.

    `status` is the HTTP status when the error refuses a whole HTTP request (a GraphQL error
    inside a response leaves the status to the response). `headers` go with that status.
    """

    code: ErrorCode = ErrorCode.BAD_USER_INPUT
    status: int = 400

    def __init__(
        self,
        message: str,
        *,
        code: ErrorCode | None = None,
        status: int | None = None,
        headers: Mapping[str, str] | None = None,
        details: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status
            self.code = CODE_OF_STATUS.get(status, ErrorCode.BAD_REQUEST)
        if code is not None:
            self.code = code
        self.headers = dict(headers or {})
        self.details = dict(details or {})

    def extensions(self) -> dict[str, Any]:
        """What `extensions` says besides the code (the field at fault, a revision, a cost)."""
        return self.details

    def as_graphql_error(self) -> GraphQLError:
        return GraphQLError(self.message, extensions={**self.extensions(), "code": self.code})


def error_document(
    errors: Sequence[GraphQLError], extensions: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A GraphQL response holding only errors: what an HTTP refusal answers, too."""
    document: dict[str, Any] = {"errors": [error.formatted for error in errors]}
    if extensions:
        document["extensions"] = dict(extensions)
    return document


def is_unexpected(error: GraphQLError) -> bool:
    """An exception raised inside the server, rather than a problem with the request."""
    original = error.original_error
    return original is not None and not isinstance(original, ApiError | GraphQLError)


def code_of(error: GraphQLError) -> str:
    code = (error.extensions or {}).get("code")
    if isinstance(code, str):
        return code
    if isinstance(error, GraphQLSyntaxError):
        return ErrorCode.GRAPHQL_PARSE_FAILED
    if isinstance(error.original_error, ApiError):
        return error.original_error.code
    if is_unexpected(error):
        return ErrorCode.INTERNAL_SERVER_ERROR
    # What is left is graphql-core's own refusal of the values sent: variables and arguments.
    return ErrorCode.BAD_USER_INPUT


def client_facing(error: GraphQLError, variables: Mapping[str, Any] | None = None) -> GraphQLError:
    """The error as the client sees it: with its code, masked if it was unexpected, and the
    values it quotes from the request's `variables` shown as JSON rather than Python."""
    code = code_of(error)
    message = INTERNAL_ERROR_MESSAGE if code == ErrorCode.INTERNAL_SERVER_ERROR else error.message
    if message.startswith("Variable '$") and variables:
        message = _with_json_values(message, variables)
    original = error.original_error
    details = original.extensions() if isinstance(original, ApiError) else {}
    return GraphQLError(
        message,
        nodes=error.nodes,
        source=error.source,
        positions=error.positions,
        path=error.path,
        extensions={**(error.extensions or {}), **details, "code": code},
    )


def shown(value: object) -> str:
    """A value the client sent, as it would write it: JSON, never a Python repr."""
    return orjson.dumps(value, default=str).decode()


def _with_json_values(message: str, variables: Mapping[str, Any]) -> str:
    """graphql-core quotes refused variable values as Python (`{'$ne': None}`): show JSON."""
    quoted = {inspect(value): shown(value) for value in _quotable(list(variables.values()))}
    for python in sorted(quoted, key=len, reverse=True):
        message = message.replace(python, quoted[python])
    return message


def _quotable(value: object) -> Iterator[object]:
    """Every object, list and constant inside a variable's value, itself included."""
    if isinstance(value, dict | list) or value is None or isinstance(value, bool):
        yield value
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        for item in value:
            yield from _quotable(item)
