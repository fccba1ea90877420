"""Refusals of the HTTP layer, shaped like GraphQL errors so that every client can read them."""

from collections.abc import Mapping

from starlette.responses import Response

from server.json import encode_json

HTTP_ERROR_CODES = {
    400: "BAD_REQUEST",
    401: "UNAUTHENTICATED",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    406: "NOT_ACCEPTABLE",
    413: "PAYLOAD_TOO_LARGE",
    415: "UNSUPPORTED_MEDIA_TYPE",
}


def http_error(
    status_code: int, message: str, headers: Mapping[str, str] | None = None
) -> Response:
    """A response with one GraphQL-shaped error: `{"errors": [{"message", "extensions"}]}`."""
    code = HTTP_ERROR_CODES.get(status_code, "BAD_REQUEST")
    body = {"errors": [{"message": message, "extensions": {"code": code}}]}
    return Response(
        encode_json(body), status_code=status_code, media_type="application/json", headers=headers
    )
