"""The errors a client can see: each has a code in `extensions.code`, defined here once."""

from collections.abc import Iterator, Mapping
from typing import Any

import orjson
from graphql import GraphQLError, GraphQLSyntaxError
from graphql.pyutils import inspect

from editing.errors import EditError

GRAPHQL_PARSE_FAILED = "GRAPHQL_PARSE_FAILED"
GRAPHQL_VALIDATION_FAILED = "GRAPHQL_VALIDATION_FAILED"
BAD_USER_INPUT = "BAD_USER_INPUT"
INTERNAL_SERVER_ERROR = "INTERNAL_SERVER_ERROR"
UNAUTHENTICATED = "UNAUTHENTICATED"
FORBIDDEN = "FORBIDDEN"
# Refusals before execution (see request_limits/): each limit has its own code.
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

INTERNAL_ERROR_MESSAGE = "Internal server error: the request could not be completed. It was logged."


class ClientError(Exception):
    """An error the client caused and can fix; its message is shown as it is."""

    code = BAD_USER_INPUT


class BadUserInput(ClientError):
    code = BAD_USER_INPUT


class Unauthenticated(ClientError):
    code = UNAUTHENTICATED


class Forbidden(ClientError):
    code = FORBIDDEN


def is_unexpected(error: GraphQLError) -> bool:
    """An exception raised inside the server, rather than a problem with the request."""
    original = error.original_error
    return original is not None and not isinstance(original, ClientError | EditError | GraphQLError)


def error_code(error: GraphQLError) -> str:
    code = (error.extensions or {}).get("code")
    if isinstance(code, str):
        return code
    if isinstance(error, GraphQLSyntaxError):
        return GRAPHQL_PARSE_FAILED
    if isinstance(error.original_error, ClientError | EditError):
        return error.original_error.code
    if is_unexpected(error):
        return INTERNAL_SERVER_ERROR
    # What is left is graphql-core's own refusal of the values sent: variables and arguments.
    return BAD_USER_INPUT


def with_code(error: GraphQLError, variables: Mapping[str, Any] | None = None) -> GraphQLError:
    """The error as the client sees it: with its code, masked if it was unexpected, and the
    values it quotes from the request's `variables` shown as JSON rather than Python."""
    code = error_code(error)
    message = INTERNAL_ERROR_MESSAGE if code == INTERNAL_SERVER_ERROR else error.message
    if message.startswith("Variable '$") and variables:
        message = _with_json_values(message, variables)
    details = (
        error.original_error.extensions() if isinstance(error.original_error, EditError) else {}
    )
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
