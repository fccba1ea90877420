"""Refusals of whole HTTP requests, rendered as GraphQL responses holding one error, so that
every client can read them (see api_errors)."""

from collections.abc import Mapping
from typing import Any

from starlette.responses import Response

from api_errors import ApiError, error_document
from schema import encode_json


def refusal_response(
    error: ApiError,
    extensions: Mapping[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
) -> Response:
    """The refusal, with the response's `extensions` and more headers, if any."""
    return Response(
        encode_json(error_document([error.as_graphql_error()], extensions)),
        status_code=error.status,
        media_type="application/json",
        headers={**error.headers, **(headers or {})},
    )


def http_error(status: int, message: str, headers: Mapping[str, str] | None = None) -> Response:
    """A refusal of this status, its code from the status."""
    return refusal_response(ApiError(message, status=status, headers=headers))
