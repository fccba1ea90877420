"""A webhook receiver on loopback for the tests: a real HTTP server in a thread that verifies
each delivery with the `standardwebhooks` package and keeps what it received. It keeps a
delivery once it has answered it, so what it kept has been answered."""

import contextlib
import http.server
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from standardwebhooks import Webhook


@dataclass
class Receiver:
    url: str
    secret: str | None = None
    failures: int = 0  # answer 500 to this many requests first
    redirect: bool = False  # answer each with a redirect to /elsewhere
    delay: float = 0.0  # seconds before each answer
    trickle: float = 0.0  # if not 0: answer 200, then a byte of the body every this many seconds
    burst: tuple[int, ...] = ()  # with `trickle`: first, bytes of the body in these parts
    events: list[dict[str, Any]] = field(default_factory=list)  # verified, as received
    ids: list[str] = field(default_factory=list)  # webhook-id of each verified delivery
    cursors: list[str | None] = field(default_factory=list)  # its Almanac-Change-Cursor
    requests: list[str] = field(default_factory=list)  # every path asked for
    hosts: list[str] = field(default_factory=list)  # the Host header of each request
    unverified: int = 0

    def wait_for(self, done: Callable[["Receiver"], bool], seconds: float = 30.0) -> None:
        deadline = time.monotonic() + seconds
        while not done(self):
            assert time.monotonic() < deadline, f"not received in time: {self.events}"
            time.sleep(0.05)


@contextmanager
def webhook_receiver(host: str = "127.0.0.1", port: int = 0) -> Iterator[Receiver]:
    receiver = Receiver(url="")
    closing = threading.Event()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["content-length"]))
            receiver.requests.append(self.path)
            receiver.hosts.append(self.headers["host"])
            time.sleep(receiver.delay)
            if receiver.trickle:
                self.send_response(200)
                self.send_header("content-length", "100000")
                self.end_headers()
                with contextlib.suppress(OSError):  # until the worker lets go
                    for size in receiver.burst:  # a part at a time: each read apart
                        self.wfile.write(b"x" * size)
                        closing.wait(0.1)
                    while not closing.wait(receiver.trickle):
                        self.wfile.write(b"x")
                return
            if receiver.redirect:
                self.send_response(302)
                self.send_header("location", "/elsewhere")
                self.end_headers()
                return
            if receiver.failures > 0:
                receiver.failures -= 1
                self.send_response(500)
                self.send_header("content-length", "100000")
                self.end_headers()
                with contextlib.suppress(OSError):  # the worker reads a few KB, then lets go
                    self.wfile.write(b"x" * 100_000)
                return
            try:
                assert receiver.secret is not None
                event = Webhook(receiver.secret).verify(body, dict(self.headers))
            except Exception:
                receiver.unverified += 1
                self.send_response(400)
                self.end_headers()
                return
            self.send_response(204)
            self.end_headers()
            receiver.events.append(event)
            receiver.ids.append(self.headers["webhook-id"])
            receiver.cursors.append(self.headers.get("almanac-change-cursor"))

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer((host, port), Handler)
    receiver.url = f"http://{host}:{server.server_address[1]}/hook"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        closing.set()
        server.shutdown()
        server.server_close()
