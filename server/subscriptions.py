"""Subscriptions' connections: how many each client may hold open, heartbeats on WebSockets,
and their end when the server drains for shutdown.

Strawberry runs the protocols (graphql-transport-ws over a WebSocket, GraphQL over SSE); the
view (server.graphql_view) hands each operation's stream of results through `Subscriptions.
stream`, which admits it (at most so many open per API key, and per address for anonymous
clients: settings; counted across every process with Redis, server.subscription_slots), and
ends it, completed, when the drain begins. An event waiting to be sent is never queued here:
the subscription reads the change log as the client takes its events (schema.subscription), so
a slow reader only falls behind in the log, and one that stops reading is let go
(server.slow_subscribers).
"""

import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import Any, Protocol, cast

import orjson
from graphql import GraphQLError, OperationType, get_operation_ast, parse
from starlette.websockets import WebSocketDisconnect
from strawberry.asgi import ASGIWebSocketAdapter
from strawberry.http.exceptions import WebSocketDisconnected
from strawberry.subscriptions.protocols.graphql_transport_ws.handlers import (
    BaseGraphQLTransportWSHandler,
)
from strawberry.types import ExecutionResult

from api_errors import ApiError, ErrorCode, client_facing
from schema import Context
from server.charges import client_of
from server.slow_subscribers import CLOSE_CODE, TooSlowToRead, close_reason, report_too_slow
from server.subscription_slots import AllTaken, Slots

HEARTBEAT_SECONDS = 15.0
"""How often a WebSocket is pinged (graphql-transport-ws `ping`): idle connections stay open
through proxies that close silent ones (SSE streams get Strawberry's comment line as often)."""


class Subscriptions:
    """The streams open, by client (server.charges.client_of): counted in `slots` (in this
    process, or across every process in Redis: server.subscription_slots), and how long a
    message to one may wait to be sent (server.slow_subscribers)."""

    def __init__(self, *, per_key: int, anonymous: int, send_timeout: float, slots: Slots) -> None:
        self.per_key, self.anonymous = per_key, anonymous
        self.send_timeout = send_timeout
        self.slots = slots
        self.closing = asyncio.Event()

    @property
    def open(self) -> Counter[str]:
        """The streams open in this process, by client."""
        return self.slots.open

    @contextlib.asynccontextmanager
    async def admitted(self, client: str, *, keyed: bool) -> AsyncIterator[None]:
        """One more open stream for `client` while the block runs, or THROTTLED (the bound
        reached)."""
        bound = self.per_key if keyed else self.anonymous
        async with contextlib.AsyncExitStack() as slot:
            try:
                await slot.enter_async_context(self.slots.held(client, bound))
            except AllTaken as taken:
                who = "this API key" if keyed else "an anonymous client (by address)"
                raise ApiError(
                    f"{bound} subscriptions are open already, the most {who} may hold: "
                    "complete one before starting another.",
                    code=ErrorCode.THROTTLED,
                    details={"openSubscriptions": taken.held, "maximum": bound},
                ) from None
            yield

    def close_all(self) -> None:
        """End every stream, completed (the server is draining for shutdown)."""
        self.closing.set()

    async def stream(
        self,
        client: str,
        keyed: bool,
        source: AsyncGenerator[Any, None],
        query: str | None,
        operation_name: str | None,
    ) -> AsyncGenerator[Any, None]:
        """`source`'s results (the operation `query` names), admitted, until it ends or the
        drain begins. Only a subscription is: a query or mutation is sent over HTTP, where it
        is priced, checked and charged as it runs."""
        async with contextlib.aclosing(source), contextlib.AsyncExitStack() as slot:
            try:
                if not is_subscription(query, operation_name):
                    raise ApiError(
                        "Only subscriptions are sent over WebSockets and SSE: send queries "
                        "and mutations as HTTP requests to /graphql.",
                        code=ErrorCode.BAD_REQUEST,
                    )
                await slot.enter_async_context(self.admitted(client, keyed=keyed))
            except ApiError as refusal:
                yield ExecutionResult(data=None, errors=[refusal.as_graphql_error()])
                return
            async for result in until(self.closing, source):
                yield shown_to_client(result)


def is_subscription(query: str | None, operation_name: str | None) -> bool:
    """Whether `query` runs a subscription (a document that does not parse is let through:
    Strawberry refuses it, and says why, before anything runs)."""
    if query is None:
        return False
    try:
        document = parse(query)
    except GraphQLError:
        return True
    operation = get_operation_ast(document, operation_name)
    return operation is None or operation.operation is OperationType.SUBSCRIPTION


def shown_to_client(result: Any) -> Any:
    """A result's errors as the client sees them (with their codes), as for queries."""
    if isinstance(result, ExecutionResult) and result.errors:
        result.errors = [client_facing(error) for error in result.errors]
    return result


async def until(closing: asyncio.Event, source: AsyncIterator[Any]) -> AsyncGenerator[Any, None]:
    """`source`'s items until it ends or `closing` is set (waiting for either)."""
    closed = asyncio.ensure_future(closing.wait())
    following: asyncio.Future[Any] | None = None
    try:
        while not closing.is_set():
            following = asyncio.ensure_future(anext(source))
            await asyncio.wait({following, closed}, return_when=asyncio.FIRST_COMPLETED)
            if not following.done():
                following.cancel()
                with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                    await following
                return
            try:
                item = following.result()
            except StopAsyncIteration:
                return
            yield item
    finally:
        closed.cancel()
        if following is not None and not following.done():
            # Cancelled (the client gone): the source is not closed while it still runs.
            following.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await following


class TextWebSocketAdapter(ASGIWebSocketAdapter):
    """Strawberry's WebSocket adapter, sending text frames: graphql-transport-ws is text, and
    the view's JSON encoder gives bytes (which the adapter would send as binary frames)."""

    async def send_json(self, message: Mapping[str, object]) -> None:
        try:
            await self.ws.send_text(orjson.dumps(message).decode())
        except WebSocketDisconnect as gone:
            raise WebSocketDisconnected from gone


class TransportWSHandler(BaseGraphQLTransportWSHandler[Context, None]):
    """Strawberry's graphql-transport-ws, with heartbeats, each stream admitted and ended by
    `Subscriptions` (the view's), and the connection closed when its client stops reading."""

    heartbeat: asyncio.Task[None] | None = None
    stopped_reading: asyncio.Event | None = None  # set by a send past its deadline

    async def handle(self) -> None:
        """Strawberry's, ended early if a message waits past the send deadline: then every
        operation ends (their slots freed), and the close (4408) is sent once the client reads
        again."""
        stopped_reading = self.stopped_reading = asyncio.Event()
        serving = asyncio.create_task(super().handle())
        stopped = asyncio.create_task(stopped_reading.wait())
        try:
            await asyncio.wait({serving, stopped}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopped.cancel()
            serving.cancel()  # (done already, unless the client stopped reading)
            await asyncio.gather(serving, return_exceptions=True)
        if not stopped_reading.is_set():
            serving.result()
            return
        seconds = self.view_of().subscriptions.send_timeout
        with contextlib.suppress(WebSocketDisconnect, WebSocketDisconnected):
            await self.websocket.close(CLOSE_CODE, close_reason(seconds))

    async def send_message(self, message: Any) -> None:
        """Strawberry's, within the send deadline: past it (the client not reading), it is
        reported, then the connection is closed (`handle`): reported before any slot is freed,
        so whoever finds the slot free finds the report too."""
        if self.stopped_reading is not None and self.stopped_reading.is_set():
            raise TooSlowToRead
        seconds = self.view_of().subscriptions.send_timeout
        try:
            async with asyncio.timeout(seconds):
                await super().send_message(message)
        except TimeoutError:
            if self.stopped_reading is not None and not self.stopped_reading.is_set():
                client = client_of(self.context.request, self.context.identity)
                report_too_slow("websocket", client, seconds)
                self.stopped_reading.set()
            raise TooSlowToRead from None

    async def handle_task_exception(self, error: Exception) -> None:
        if not isinstance(error, TooSlowToRead):  # reported once, by `send_message`
            await super().handle_task_exception(error)

    def view_of(self) -> "StreamingView":
        return cast(StreamingView, self.view)

    def on_request_accepted(self) -> None:
        super().on_request_accepted()
        self.heartbeat = asyncio.create_task(self.ping_every(HEARTBEAT_SECONDS))

    async def ping_every(self, seconds: float) -> None:
        while True:
            await asyncio.sleep(seconds)
            if self.connection_acknowledged:
                with contextlib.suppress(Exception):  # gone: `handle` ends the connection
                    await self.send_message({"type": "ping"})

    async def shutdown(self) -> None:
        if self.heartbeat is not None:
            self.heartbeat.cancel()
        await super().shutdown()

    async def handle_connection_init(self, message: Any) -> None:
        # Kept where the view's `on_ws_connect` reads the key from (Context has no such field).
        setattr(self.context, "connection_params", message.get("payload") or {})  # noqa: B010
        await super().handle_connection_init(message)

    async def _send_result_stream(self, operation: Any, result_source: Any) -> None:
        stream = self.view_of().stream_of(
            self.context, result_source, operation.query, operation.operation_name
        )
        # Closed here, whatever ends the operation: an exception kept by its task would keep
        # the stream, and its slot, alive.
        async with contextlib.aclosing(stream):
            await super()._send_result_stream(operation, stream)


class StreamingView(Protocol):
    """What the handler asks of the view (server.graphql_view)."""

    subscriptions: Subscriptions

    def stream_of(
        self,
        context: Context,
        source: AsyncGenerator[Any, None],
        query: str | None,
        operation_name: str | None,
    ) -> AsyncGenerator[Any, None]: ...
