"""A request's body must arrive within a deadline, or it is answered 408 and closed.

Uvicorn waits for a body as long as its client keeps the connection open, so a client sending
one byte a second would hold a request (and its memory) for as long as it likes.
"""

import asyncio

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from server.errors import http_error


class BodyTooSlow(Exception):
    pass


class BodyDeadlineMiddleware:
    def __init__(self, app: ASGIApp, seconds: float) -> None:
        self.app = app
        self.seconds = seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        deadline = asyncio.get_running_loop().time() + self.seconds
        body_complete = False
        response_started = False

        async def receive_in_time() -> Message:
            nonlocal body_complete
            if body_complete:  # Later receives wait for a disconnect: no deadline.
                return await receive()
            try:
                async with asyncio.timeout_at(deadline):
                    message = await receive()
            except TimeoutError:
                raise BodyTooSlow from None
            body_complete = message["type"] != "http.request" or not message.get("more_body")
            return message

        async def send_watched(message: Message) -> None:
            nonlocal response_started
            response_started = response_started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive_in_time, send_watched)
        except BodyTooSlow:
            if response_started:
                raise
            message = f"The request's body did not arrive within {self.seconds:g} seconds."
            await http_error(408, message, {"Connection": "close"})(scope, receive, send)
