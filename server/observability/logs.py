"""The server's logs, as text for people or as JSON (`ALMANAC_LOG_FORMAT=json`), each line with
the ID of the request it is about.

`RequestIds` (ASGI middleware) takes the request's `X-Request-ID` (or makes one), returns it in
the response and keeps it in a context variable for every log line written meanwhile. Its
observers see each request when it is answered (the request log, the metrics), with its record
(server.exchange) read once for all of them: one layer around every request, not one per
concern.
"""

import contextvars
import itertools
import logging
import re
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from server.exchange import KEY, Exchange
from server.observability.tracing import WithTraceId
from server.settings import Settings

REQUEST_ID_HEADER = "x-request-id"
HEADER = REQUEST_ID_HEADER.encode()
# A client's own ID is kept when it is short and plain; anything else is replaced.
CLIENT_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")

request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")

TEXT_FORMAT = "%(levelname)s:     %(name)s: %(message)s [request %(request_id)s]"
JSON_FIELDS = "%(asctime)s %(levelname)s %(name)s %(message)s %(request_id)s"


def printable(text: str) -> str:
    """`text` with every character a terminal or a log reader would act on (a newline, an
    escape, a bidi override) written as its escape, `\\n`, `\\x1b`, `\\u202e`: what a client
    sent can never start a line of its own, or recolour one."""
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in text)


class OneLineText(logging.Formatter):
    """The text format, each line's message made printable (tracebacks are left as they are:
    the server wrote them)."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        record.message = printable(record.message)
        return super().formatMessage(record)


class WithRequestId(logging.Filter):
    """Every line says which request it is about ("-" for none)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = request_id.get()
        return True


def log_config(settings: Settings) -> dict[str, Any]:
    """Logging for `almanac serve` (Uvicorn's `log_config`): Uvicorn's own lines and the
    almanac's, in the configured format. Uvicorn's access log is replaced by the request log
    (server.observability.request_log), which writes its lines itself in the same shape.
    With tracing on, each line also carries its trace ID."""
    filters: dict[str, Any] = {"request_id": {"()": WithRequestId}}
    text, fields = TEXT_FORMAT, JSON_FIELDS
    if settings.tracing:
        filters["trace_id"] = {"()": WithTraceId}
        text, fields = text.replace("]", " trace %(trace_id)s]"), fields + " %(trace_id)s"
    formatter: dict[str, Any] = (
        {"()": "pythonjsonlogger.json.JsonFormatter", "format": fields}
        if settings.log_format == "json"
        else {"class": "server.observability.logs.OneLineText", "format": text}
    )
    level = settings.log_level.upper()
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": filters,
        "formatters": {"main": formatter},
        "handlers": {
            "main": {
                "class": "logging.StreamHandler",
                "formatter": "main",
                "filters": list(filters),
                "stream": "ext://sys.stderr",
            }
        },
        "loggers": {
            "uvicorn": {"handlers": ["main"], "level": level, "propagate": False},
            "uvicorn.access": {"handlers": [], "level": "WARNING", "propagate": False},
            "almanac": {"handlers": ["main"], "level": level, "propagate": False},
            # The trace exporter's complaints (a collector that cannot be reached).
            "opentelemetry": {"handlers": ["main"], "level": "WARNING", "propagate": False},
        },
    }


Observer = Callable[[Scope, Exchange | None, int, float], None]
"""What else sees each answered request: its scope, its record (None: not one the API answered
as GraphQL or a download), status and seconds (the request log, the metrics)."""


class RequestIds:
    def __init__(self, app: ASGIApp, observers: Sequence[Observer] = ()) -> None:
        self.app = app
        self.observers = observers
        # IDs unique across processes and restarts: a random prefix and a count, cheaper to
        # make than a UUID a request.
        prefix = uuid.uuid4().hex[:16]
        self.made = (f"{prefix}{count:016x}" for count in itertools.count(1))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = _header(scope, HEADER)
        ident = given if given and CLIENT_REQUEST_ID.match(given) else next(self.made)
        token = request_id.set(ident)
        began = time.perf_counter()
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", ()), (HEADER, ident.encode())]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            if self.observers:
                # The record, if the API answered it (server.exchange.exchange_of, read here).
                record = scope.get("state", {}).get(KEY)
                exchange = record if isinstance(record, Exchange) else None
                seconds = time.perf_counter() - began
                for observe in self.observers:
                    observe(scope, exchange, status, seconds)
            request_id.reset(token)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return str(value.decode("latin-1"))
    return None
