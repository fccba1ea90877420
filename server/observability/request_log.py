"""The request log: one line for each answered request, as text or as JSON
(`ALMANAC_LOG_FORMAT`), at level `info`: method, path, status, duration, operation, cost, error
code, API key name (never the key), client address, request ID (and trace ID when tracing).

It is an observer of `server.observability.logs.RequestIds`, and writes its lines itself, in the
same shape
as the logging module's other lines, because of what that costs on the warm path (a request
of some 80 µs of CPU): a LogRecord made, formatted and written took 9 µs (text) to 15 µs
(JSON); one line formatted as each request ends still took 3-5 µs, most of it in the cache
misses of code run once between two requests. So a request only notes its fields (well under
1 µs), and the lines are formatted together, 256 at a time, then written at once: when 256
are waiting, every 0.25 s while the server runs, and at shutdown.
"""

import sys
import time
from typing import BinaryIO

import orjson
from starlette.types import Scope

from server.exchange import Exchange
from server.observability.logs import printable, request_id
from server.observability.tracing import current_trace_id
from server.settings import Settings

NAME = "almanac.requests"
PREFIX = f"INFO:     {NAME}: "
FLUSH_LINES = 256
FLUSH_SECONDS = 0.25
"""How often the running server writes the lines waiting (server.lifespan)."""

# What a request notes: time, method, path, status, seconds, operation, cost, code, key name,
# client address, request ID, trace ID.
Noted = tuple[float, str, str, int, float, str, int | None, str, str, str, str, str | None]


class RequestLog:
    def __init__(self, *, json: bool, tracing: bool, stream: BinaryIO | None = None) -> None:
        self.json = json
        self.tracing = tracing
        self.stream = stream
        """Where lines go; by default standard error, as it is when they are written."""
        self.pending: list[Noted] = []
        self.second = -1
        self.second_text = ""

    @classmethod
    def configured(cls, settings: Settings) -> "RequestLog | None":
        """The log the settings ask for: none above level `info`."""
        if settings.log_level not in ("info", "debug"):
            return None
        return cls(json=settings.log_format == "json", tracing=settings.tracing)

    def observe(self, scope: Scope, exchange: Exchange | None, status: int, seconds: float) -> None:
        if exchange is None:  # not a GraphQL request
            operation, cost, code, key = "-", None, "-", "-"
        else:
            operation, cost, code = exchange.operation or "-", exchange.cost, exchange.code or "-"
            key = "-" if exchange.identity is None else exchange.identity.name
        client = scope.get("client")
        self.pending.append(
            (
                time.time(),
                scope["method"],
                scope["path"],
                status,
                seconds,
                operation,
                cost,
                code,
                key,
                client[0] if client else "-",
                request_id.get(),
                current_trace_id() if self.tracing else None,
            )
        )
        if len(self.pending) >= FLUSH_LINES:
            self.flush()

    def flush(self) -> None:
        """Writes the lines waiting, in one write."""
        if not self.pending:
            return
        noted, self.pending = self.pending, []
        line = self.json_line if self.json else self.text_line
        written = bytearray()
        for each in noted:
            # Each line copied out at once: orjson's bytes, all kept alive until the join,
            # made a line cost three times as much (each a fresh block from malloc).
            written += line(each)
        stream = self.stream or sys.stderr.buffer
        stream.write(written)
        stream.flush()

    def text_line(self, noted: Noted) -> bytes:
        _, method, path, status, seconds, operation, cost, code, key, client, ident, trace = noted
        traced = "" if trace is None else f" trace {trace}"
        line = (
            f"{PREFIX}{method} {path} {status} {seconds * 1000:.1f}ms operation={operation} "
            f"cost={'-' if cost is None else cost} code={code} key={key} client={client} "
            f"[request {ident}{traced}]"
        )
        # The path (percent-decoded), the operation's name, the key's name and the forwarded
        # address come from clients: one request is one line whatever they hold.
        return printable(line).encode() + b"\n"

    def json_line(self, noted: Noted) -> bytes:
        when, method, path, status, seconds, operation, cost, code, key, client, ident, trace = (
            noted
        )
        fields = {
            "asctime": self.asctime(when),
            "levelname": "INFO",
            "name": NAME,
            "message": f"{method} {path} {status}",
            "request_id": ident,
            "method": method,
            "path": path,
            "status": status,
            "duration_ms": round(seconds * 1000, 1),
            "operation": operation,
            "cost": cost,
            "code": code,
            "key": key,
            "client": client,
        }
        if trace is not None:
            fields["trace_id"] = trace
        return orjson.dumps(fields, option=orjson.OPT_APPEND_NEWLINE)

    def asctime(self, when: float) -> str:
        """The time as the logging module prints it (`2026-11-30 13:52:57,111`), its seconds
        formatted once a second."""
        second = int(when)
        if second != self.second:
            self.second = second
            self.second_text = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(second))
        return f"{self.second_text},{int((when - second) * 1000):03d}"
