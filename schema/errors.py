"""The errors a client can see: each has a code in `extensions.code`, defined here once."""

from collections.abc import Iterator

from graphql import GraphQLError, GraphQLSyntaxError
from strawberry.extensions import SchemaExtension

from editing.errors import EditError

GRAPHQL_PARSE_FAILED = "GRAPHQL_PARSE_FAILED"
GRAPHQL_VALIDATION_FAILED = "GRAPHQL_VALIDATION_FAILED"
BAD_USER_INPUT = "BAD_USER_INPUT"
INTERNAL_SERVER_ERROR = "INTERNAL_SERVER_ERROR"
UNAUTHENTICATED = "UNAUTHENTICATED"
FORBIDDEN = "FORBIDDEN"

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


def with_code(error: GraphQLError) -> GraphQLError:
    """The error as the client sees it: with its code, and masked if it was unexpected."""
    code = error_code(error)
    message = INTERNAL_ERROR_MESSAGE if code == INTERNAL_SERVER_ERROR else error.message
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


class ValidationErrorCodes(SchemaExtension):
    """Marks validation errors, which look like any other error once validation is over.

    The HTTP view gives every other error its code with `with_code`, once the result is final.
    """

    def on_validate(self) -> Iterator[None]:
        yield
        for error in self.execution_context.pre_execution_errors or []:
            if isinstance(error, GraphQLSyntaxError):
                continue
            # A value our scalars refuse is bad input, written inline or sent as a variable.
            refused_value = isinstance(error.original_error, ClientError)
            code = BAD_USER_INPUT if refused_value else GRAPHQL_VALIDATION_FAILED
            error.extensions = {**(error.extensions or {}), "code": code}
