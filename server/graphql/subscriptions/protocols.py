"""Subscriptions' connections: how many each client may hold open, heartbeats on WebSockets,
their end when their key is revoked or the server drains for shutdown, and WebSockets'
messages held to the protocol (their size, their shape, an idle connection closed).

Strawberry runs the protocols (graphql-transport-ws over a WebSocket, GraphQL over SSE); each
operation is admitted by the gate (server.graphql.admission) before anything of it is parsed or run,
then the view (server.graphql.view) hands its stream of results through `Subscriptions.
stream`, which admits it (at most so many open per API key, and per address for anonymous
clients: settings; counted across every process with Redis, request_limits.slots), and
ends it, completed, when the drain begins (or with UNAUTHENTICATED, its key found revoked). An
event waiting to be sent is never queued here: the subscription reads the change log as the
client takes its events (schema.subscription), so a slow reader only falls behind in the log,
and one that stops reading is let go (server.graphql.subscriptions.slow_subscribers).
"""

import asyncio
import contextlib
import logging
from collections import Counter
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, Protocol, cast

import orjson
from graphql import GraphQLError
from starlette.requests import HTTPConnection
from starlette.websockets import WebSocketDisconnect, WebSocketState
from strawberry.asgi import ASGIWebSocketAdapter
from strawberry.http import GraphQLRequestData
from strawberry.http.exceptions import (
    NonJsonMessageReceived,
    NonTextMessageReceived,
    WebSocketDisconnected,
)
from strawberry.subscriptions.protocols.graphql_transport_ws.handlers import (
    BaseGraphQLTransportWSHandler,
    Operation,
)
from strawberry.types import ExecutionResult
from strawberry.types.execution import PreExecutionError

from api_errors import ApiError, ErrorCode, client_facing
from request_limits import AllTaken, Slots
from schema import Context, Identity
from server.charges import client_of
from server.graphql.admission import SUBSCRIPTIONS, Gate, text_over
from server.graphql.subscriptions.slow_subscribers import (
    CLOSE_CODE,
    TooSlowToRead,
    close_reason,
    report_too_slow,
)

log = logging.getLogger("almanac.subscriptions")

HEARTBEAT_SECONDS = 15.0
"""How often a WebSocket is pinged (graphql-transport-ws `ping`): idle connections stay open
through proxies that close silent ones (SSE streams get Strawberry's comment line as often)."""

KeyCheck = Callable[[], Awaitable[ApiError | None]]
"""Why a stream's key no longer admits it (revoked, say), or None: asked again and again."""


class Subscriptions:
    """The streams open, by client (server.charges.client_of): counted in `slots` (in this
    process, or across every process in Redis: request_limits.slots), how long a
    message
    to one may wait to be sent (server.graphql.subscriptions.slow_subscribers), how often a
    stream's key is checked
    again (a revoked key's streams end), and how long a WebSocket may hold none."""

    def __init__(
        self,
        *,
        per_key: int,
        anonymous: int,
        send_timeout: float,
        slots: Slots,
        key_check_seconds: float,
        idle_seconds: float,
    ) -> None:
        self.per_key, self.anonymous = per_key, anonymous
        self.send_timeout = send_timeout
        self.slots = slots
        self.key_check_seconds, self.idle_seconds = key_check_seconds, idle_seconds
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
        still_valid: KeyCheck,
    ) -> AsyncGenerator[Any, None]:
        """`source`'s results (a subscription the gate admitted: server.graphql.admission), within
        the client's bound, until it ends or the drain begins, or its key is found revoked
        (`still_valid`, every `key_check_seconds`): then it ends with that refusal."""
        async with contextlib.aclosing(source), contextlib.AsyncExitStack() as slot:
            try:
                await slot.enter_async_context(self.admitted(client, keyed=keyed))
            except ApiError as refusal:
                yield PreExecutionError(data=None, errors=[refusal.as_graphql_error()])
                return
            ending, revoked = asyncio.Event(), list[ApiError]()
            watching = asyncio.create_task(self.watch(ending, still_valid, revoked))
            try:
                async for result in until(ending, source):
                    yield shown_to_client(result)
            finally:
                watching.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watching
            if revoked:
                yield ExecutionResult(data=None, errors=[revoked[0].as_graphql_error()])

    async def watch(
        self, ending: asyncio.Event, still_valid: KeyCheck, revoked: list[ApiError]
    ) -> None:
        """Sets `ending` when the drain begins, or when the stream's key no longer admits it
        (its refusal then in `revoked`): checked every `key_check_seconds`, in every process
        alike, as the key is read from the store each time."""
        while not self.closing.is_set():
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.key_check_seconds):
                    await self.closing.wait()
            if self.closing.is_set():
                break
            try:
                refusal = await still_valid()
            except Exception:  # the store not answering: the key is read again next time
                log.warning(
                    "An open subscription's API key could not be read; trying again in %g s.",
                    self.key_check_seconds,
                    exc_info=True,
                )
                continue
            if refusal is not None:
                revoked.append(refusal)
                break
        ending.set()


def shown_to_client(result: Any) -> Any:
    """A result's errors as the client sees them (with their codes), as for queries."""
    if isinstance(result, ExecutionResult) and result.errors:
        result.errors = [client_facing(error) for error in result.errors]
    return result


async def until(ending: asyncio.Event, source: AsyncIterator[Any]) -> AsyncGenerator[Any, None]:
    """`source`'s items until it ends or `ending` is set (waiting for either)."""
    ended = asyncio.ensure_future(ending.wait())
    following: asyncio.Future[Any] | None = None
    try:
        while not ending.is_set():
            following = asyncio.ensure_future(anext(source))
            await asyncio.wait({following, ended}, return_when=asyncio.FIRST_COMPLETED)
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
        ended.cancel()
        if following is not None and not following.done():
            # Cancelled (the client gone): the source is not closed while it still runs.
            following.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await following


TOO_BIG = 1009
"""RFC 6455's close code for a message too big to process."""
IDLE = 1000
"""The close of a connection left idle (a normal closure: there is nothing to resume)."""


class TextWebSocketAdapter(ASGIWebSocketAdapter):
    """Strawberry's WebSocket adapter, sending text frames (graphql-transport-ws is text, and
    the view's JSON encoder gives bytes, which the adapter would send as binary frames), and
    each message received held to the body limit before it is decoded: Uvicorn refuses larger
    ones already (`ws_max_size`, server.cli), but the app may be served otherwise."""

    async def iter_json(
        self, *, ignore_parsing_errors: bool = False
    ) -> AsyncGenerator[object, None]:
        limit = cast(StreamingView, self.view).gate.settings.max_body_bytes
        while self.ws.application_state != WebSocketState.DISCONNECTED:
            try:
                message = await self.ws.receive()
            except WebSocketDisconnect:
                return
            if message["type"] == "websocket.disconnect":
                return
            text = message.get("text")
            if text is None:
                raise NonTextMessageReceived
            if text_over(limit, text):
                await self.close(TOO_BIG, f"A message holds at most {limit} bytes.")
                return
            try:
                yield self.view.decode_json(text)
            except ValueError as error:  # JSONDecodeError, and orjson's
                if not ignore_parsing_errors:
                    raise NonJsonMessageReceived from error

    async def send_json(self, message: Mapping[str, object]) -> None:
        try:
            await self.ws.send_text(orjson.dumps(message).decode())
        except WebSocketDisconnect as gone:
            raise WebSocketDisconnected from gone


def malformed(message: object) -> str | None:
    """What is wrong with a graphql-transport-ws message's shape, if anything (the protocol
    closes the connection with 4400 and this reason)."""
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        return "A message is a JSON object with a string `type`."
    kind = message["type"]
    if kind in ("subscribe", "complete") and not isinstance(message.get("id"), str):
        return f"A `{kind}` message needs a string `id`."
    if kind != "subscribe":
        return None
    payload = message.get("payload")
    if not isinstance(payload, dict):
        return "A `subscribe` message needs a `payload` object."
    for name, kind_of in (
        ("query", str),
        ("operationName", str),
        ("variables", dict),
        ("extensions", dict),
    ):
        if payload.get(name) is not None and not isinstance(payload[name], kind_of):
            return f"`payload.{name}` must be a {'string' if kind_of is str else 'object'}."
    return None


def authorization_of(connection: HTTPConnection, payload: Mapping[str, object]) -> str | None:
    """A WebSocket's key: `Authorization` in the `connection_init` payload, else the
    handshake's header (as for queries)."""
    authorization = payload.get("Authorization") or payload.get("authorization")
    if isinstance(authorization, str):
        return authorization
    return connection.headers.get("authorization")


class TransportWSHandler(BaseGraphQLTransportWSHandler[Context, None]):
    """Strawberry's graphql-transport-ws, with heartbeats; each operation admitted by the gate
    (server.graphql.admission) with a context of its own, and its stream admitted and ended by
    `Subscriptions` (the view's); malformed messages closed with the protocol's codes; the
    connection closed when its client stops reading, or holds no subscription for a while."""

    heartbeat: asyncio.Task[None] | None = None
    idle: asyncio.Task[None] | None = None
    stopped_reading: asyncio.Event | None = None  # set by a send past its deadline
    authorization: str | None = None
    sent_extensions: dict[str, dict[str, Any] | None]

    async def handle(self) -> None:
        """Strawberry's, ended early if a message waits past the send deadline: then every
        operation ends (their slots freed), and the close (4408) is sent once the client reads
        again."""
        self.sent_extensions = {}
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

    async def handle_message(self, message: Any) -> None:
        """Strawberry's, for a message of the protocol's shape; another closes the connection
        (4400, with what is wrong), never with a traceback."""
        if (problem := malformed(message)) is not None:
            await self.handle_invalid_message(problem)
            return
        if message["type"] != "subscribe":
            await super().handle_message(message)
            return
        # Strawberry's Operation keeps no extensions: a persisted id travels in them.
        self.sent_extensions[message["id"]] = message["payload"].get("extensions")
        message["payload"].setdefault("query", None)
        await super().handle_message(message)
        if message["id"] not in self.operations:  # refused: it never runs
            self.sent_extensions.pop(message["id"], None)

    async def run_operation(self, operation: Operation[Context, None]) -> None:
        """One operation: admitted by the gate, then run by Strawberry's pipeline and its
        results sent, within the client's bound (`Subscriptions`); a refusal costs the
        minimum. (Strawberry's own `run_operation`, on public members only.)"""
        view = self.view_of()
        context = view.connection_context(self.context.connection, self.context.identity)
        data = GraphQLRequestData(
            query=operation.query,
            variables=operation.variables,
            operation_name=operation.operation_name,
            extensions=self.sent_extensions.pop(operation.id, None),
        )
        try:
            try:
                text = await view.gate.admit(context, data, SUBSCRIPTIONS, self.authorization)
            except (ApiError, GraphQLError) as refusal:
                # THROTTLED instead if not even the minimum fits the budget.
                shown = await view.gate.refused(context) or refusal
                error = shown if isinstance(shown, GraphQLError) else shown.as_graphql_error()
                await operation.send_initial_errors([client_facing(error)])
                return
            source = await self.schema.subscribe(
                text,
                variable_values=operation.variables,
                context_value=context,
                root_value=self.root_value,
                operation_name=operation.operation_name,
            )
            stream = view.stream_of(context, source, self.authorization)
            refused: PreExecutionError | None = None
            async with contextlib.aclosing(stream):
                async for result in stream:
                    if isinstance(result, PreExecutionError):  # the first, if any
                        refused = result
                        break
                    await operation.send_next(result)
            if refused is not None:  # sent once closed: its slot is free when the client hears
                await operation.send_initial_errors(refused.errors or [])
                return
            await operation.send_operation_message({"id": operation.id, "type": "complete"})
        except Exception as error:
            await self.handle_task_exception(error)
            with contextlib.suppress(Exception):
                await operation.send_operation_message({"id": operation.id, "type": "complete"})
            self.operations.pop(operation.id, None)
            raise

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
                client = client_of(self.context.connection, self.context.identity)
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

    async def close_when_idle(self, seconds: float) -> None:
        """Closes the connection once it has held no operation for `seconds`: an idle socket
        would keep one of the server's connections for nothing."""
        loop = asyncio.get_running_loop()
        quiet_since = loop.time()
        while True:
            await asyncio.sleep(seconds / 4)
            if self.operations:
                quiet_since = loop.time()
            elif loop.time() - quiet_since >= seconds:
                with contextlib.suppress(Exception):  # gone already
                    await self.websocket.close(IDLE, f"Idle: no subscription for {seconds:g} s.")
                return

    async def shutdown(self) -> None:
        for task in (self.heartbeat, self.idle):
            if task is not None:
                task.cancel()
        await super().shutdown()

    async def handle_connection_init(self, message: Any) -> None:
        payload = message.get("payload") or {}
        self.context.connection_params = payload  # where the view's `on_ws_connect` reads it
        await super().handle_connection_init(message)
        if self.connection_acknowledged and self.idle is None:
            self.authorization = authorization_of(self.context.connection, payload)
            seconds = self.view_of().subscriptions.idle_seconds
            self.idle = asyncio.create_task(self.close_when_idle(seconds))


class StreamingView(Protocol):
    """What the handler and the adapter ask of the view (server.graphql.view)."""

    subscriptions: Subscriptions
    gate: Gate

    def connection_context(
        self, connection: HTTPConnection, identity: Identity | None
    ) -> Context: ...

    def stream_of(
        self, context: Context, source: AsyncGenerator[Any, None], authorization: str | None
    ) -> AsyncGenerator[Any, None]: ...
