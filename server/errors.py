"""Refusals of the HTTP layer, shaped like GraphQL errors so that every client can read them."""

from collections.abc import Mapping
from typing import Any

from starlette.responses import Response

from server.json import encode_json

HTTP_ERROR_CODES = {
    400: "BAD_REQUEST",
    401: "UNAUTHENTICATED",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    406: "NOT_ACCEPTABLE",
    408: "REQUEST_TIMEOUT",
    413: "PAYLOAD_TOO_LARGE",
    415: "UNSUPPORTED_MEDIA_TYPE",
    431: "REQUEST_HEADER_FIELDS_TOO_LARGE",
    500: "INTERNAL_SERVER_ERROR",
    503: "SERVICE_UNAVAILABLE",
}


class HTTPRefusal(Exception):
    """A request refused at the HTTP level, before any GraphQL is read."""

    def __init__(
        self,
        status_code: int,
        message: str,
        headers: Mapping[str, str] | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.message = message
        self.headers = headers
        self.code = code

    def response(
        self, extensions: Mapping[str, Any] | None = None, headers: Mapping[str, str] | None = None
    ) -> Response:
        """The refusal, with the response's `extensions` and more headers, if any."""
        return http_error(
            self.status_code,
            self.message,
            {**(self.headers or {}), **(headers or {})},
            self.code,
            extensions,
        )


def http_error(
    status_code: int,
    message: str,
    headers: Mapping[str, str] | None = None,
    code: str | None = None,
    extensions: Mapping[str, Any] | None = None,
) -> Response:
    """A response with one GraphQL-shaped error: `{"errors": [{"message", "extensions"}]}`."""
    return Response(
        error_body(status_code, message, code, extensions),
        status_code=status_code,
        media_type="application/json",
        headers=headers,
    )


def error_body(
    status_code: int,
    message: str,
    code: str | None = None,
    extensions: Mapping[str, Any] | None = None,
) -> bytes:
    """The JSON of one GraphQL-shaped error, its code from the status unless given."""
    code = code or HTTP_ERROR_CODES.get(status_code, "BAD_REQUEST")
    body: dict[str, Any] = {"errors": [{"message": message, "extensions": {"code": code}}]}
    if extensions:
        body["extensions"] = extensions
    return encode_json(body)
