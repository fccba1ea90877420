"""A request body's size limit, for the GraphQL view.

(Starlette's RequestBodyLimitMiddleware answers a body declared too long with its own
plain-text 413, whatever the app answers: this API's refusals are GraphQL-shaped.)
"""

from starlette.types import Message, Receive, Scope

from api_errors import ApiError


class BodyTooLarge(Exception):
    pass


def too_large(limit: int) -> ApiError:
    """The refusal of a body over `limit` bytes."""
    message = (
        f"The request body is larger than this server accepts ({limit} bytes). "
        "Send a smaller request."
    )
    return ApiError(message, status=413)


def declared_too_large(scope: Scope, limit: int) -> bool:
    """Whether the request says (`Content-Length`) that its body is over `limit` bytes."""
    declared = declared_length(scope)
    return declared is not None and declared > limit


def declared_length(scope: Scope) -> int | None:
    """The body's length as the request declares it (`Content-Length`), if it does."""
    for name, value in scope["headers"]:
        if name == b"content-length":
            return int(value) if value.isdigit() else None
    return None


def limited(receive: Receive, limit: int, scope: Scope | None = None) -> Receive:
    """`receive`, refusing a body (even one sent without a length) beyond `limit` bytes. A body
    whose length `scope` declares within the limit is read through `receive` itself: the
    server's parser delivers no more of a request's body than its `Content-Length`."""
    if scope is not None and (declared := declared_length(scope)) is not None and declared <= limit:
        return receive
    received = 0

    async def receive_within_limit() -> Message:
        nonlocal received
        message = await receive()
        received += len(message.get("body", b""))
        if received > limit:
            raise BodyTooLarge
        return message

    return receive_within_limit


def text_over(limit: int, text: str) -> bool:
    """Whether `text` is over `limit` bytes in UTF-8: counted in characters first (a character
    is one to four bytes), so a text that surely fits is not encoded to be measured."""
    if len(text) > limit:
        return True
    return len(text) * 4 > limit and len(text.encode()) > limit
