"""The path of a page request through the project's code, traced in a real `almanac serve`.

A launcher (`LAUNCHER`, run with `python -c`) installs a profiling hook (`sys.setprofile` and
`threading.setprofile`: nothing in the app's code) before it imports the app, then runs
`almanac serve` as the CLI does. A control thread reads commands on the process's stdin: `arm`
starts recording, `dump` stops and writes what was recorded. Recorded: every call into (or
resumption of) and return from a function of the project's packages (`PACKAGES`), in the
request's task and the tasks it starts (marked as Uvicorn's `run_asgi` begins, through a context
variable), in the transport's callbacks, and on the store's thread. A background task that uses
the store in the window (the change-log follower, say) spoils the trace: it is taken again.

- warm page: the site's page (contract/benchmark-page.graphql) POSTed twice; the second, its
  answer kept, is traced: the files entered in order (each visit: consecutive entries into one
  file are one), how many distinct files, and the re-entries (visits after a file's first);
- cold page: the same on a second server with answer reuse off (ALMANAC_RESPONSE_CACHE_BYTES=0,
  as bench/cold_page.py defines a cold page), so the page runs and reads the store; the second
  request is traced: how many times control comes into `server/` from a lower package (a lower
  package calling `server/` code, or returning into a `server/` frame).

    .venv/bin/python -m bench.trace_flow [--calls] [--setting ALMANAC_METRICS=false ...]

`--calls` lists every function entered, in order.
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from bench.run import CONTRACT, ROOT, SLUG, UNREFUSING_BUDGET, free_port, wait_until_up

PACKAGES = (
    "server",
    "schema",
    "store",
    "editing",
    "resolvers",
    "request_limits",
    "api_errors",
    "webhooks",
)
LOWER = tuple(package for package in PACKAGES if package != "server")

LAUNCHER = r"""
import asyncio, contextvars, json, os, sys, threading

ROOT = os.environ["TRACE_ROOT"] + os.sep
PACKAGES = tuple(os.environ["TRACE_PACKAGES"].split(","))
IN_REQUEST = contextvars.ContextVar("in_request", default=False)
replies = os.fdopen(os.dup(1), "w", buffering=1)
os.dup2(2, 1)  # the server's own output goes to stderr
files = {}
events = []
live = {}  # the frames entered since `arm` (held: their ids stay theirs)
armed = False
main = threading.main_thread()
LOOP_TURN = os.path.join("asyncio", "events.py")


def project_file(code):
    known = files.get(code)
    if known is None:
        name = code.co_filename
        known = ""
        if name.startswith(ROOT):
            relative = name[len(ROOT):]
            if relative.split(os.sep, 1)[0] in PACKAGES:
                known = relative
        files[code] = known
    return known


def hook(frame, event, arg):
    if event not in ("call", "return"):
        return
    code = frame.f_code
    if event == "call" and code.co_name == "run_asgi" and "uvicorn" in code.co_filename:
        IN_REQUEST.set(True)  # the request's task (and the tasks it starts)
        return
    if not armed:
        return
    path = project_file(code)
    if not path:
        return
    thread = threading.current_thread()
    if thread is not main:
        where = "thread"
    elif IN_REQUEST.get():
        where = "request"
    else:
        try:
            task = asyncio.current_task()
        except RuntimeError:
            task = None
        where = "callback" if task is None else "background"
    caller = frame.f_back
    while caller is not None and not project_file(caller.f_code):
        if caller.f_code.co_filename.endswith(LOOP_TURN):
            caller = None  # a resumed task: nothing of the project's below it
            break
        caller = caller.f_back
    above = project_file(caller.f_code) if caller is not None else ""
    if event == "call":
        resumed = frame in live  # a coroutine or generator going on
        live[frame] = True
    else:
        resumed = False
    events.append((event, path, code.co_qualname, frame.f_lineno, above, where, resumed))


def control():
    global armed, events
    for line in sys.stdin:
        command = line.strip()
        if command == "arm":
            events = []
            live.clear()
            armed = True
            replies.write("armed\n")
        elif command == "dump":
            armed = False
            replies.write(json.dumps(events) + "\n")
            live.clear()


threading.setprofile(hook)
sys.setprofile(hook)
threading.Thread(target=control, daemon=True).start()
sys.argv = ["almanac", *sys.argv[1:]]
from server.cli import main as almanac
almanac()
"""


@dataclass(frozen=True)
class Event:
    kind: str  # "call" (entered or resumed) or "return" (left or suspended)
    path: str
    function: str
    line: int
    above: str  # the nearest project frame's file below it on the stack ("" none)
    where: str  # "request", "callback", "thread" or "background"
    resumed: bool  # a call that resumes a coroutine or generator entered before


class Traced:
    """`almanac serve` under the tracing hook, on a free port, its own data directory."""

    def __init__(self, settings: dict[str, str]) -> None:
        self.settings = settings

    @contextmanager
    def serving(self) -> Iterator["Traced"]:
        port = free_port()
        with tempfile.TemporaryDirectory(prefix="almanac-trace-") as data:
            environment = {k: v for k, v in os.environ.items() if not k.startswith("ALMANAC_")}
            environment |= {
                "ALMANAC_DATA_DIR": data,
                **UNREFUSING_BUDGET,  # the bench measures the path, not refusals
                "TRACE_ROOT": str(ROOT),
                "TRACE_PACKAGES": ",".join(PACKAGES),
                "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.getenv("PYTHONPATH")])),
                **self.settings,
            }
            command = [sys.executable, "-c", LAUNCHER, "serve", "--port", str(port)]
            self.process = subprocess.Popen(
                command,
                cwd=ROOT,
                env=environment,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
            )
            self.url = f"http://127.0.0.1:{port}"
            try:
                wait_until_up(self.url)
                yield self
            finally:
                self.process.terminate()
                self.process.wait(timeout=30)

    def command(self, line: str) -> str:
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        return self.process.stdout.readline()

    def page(self, connection: "Connection") -> None:
        body = {"query": CONTRACT.read_text(encoding="utf-8"), "variables": {"slug": SLUG}}
        status, answer = connection.post("/graphql", json.dumps(body).encode())
        assert status == 200, answer[:300]
        assert "errors" not in json.loads(answer), answer[:300]

    def traced_page(self, attempts: int = 20) -> list[Event]:
        """The second of two page requests, traced (taken again if background work ran)."""
        with Connection(self.url) as connection:
            self.page(connection)
            for attempt in range(1, attempts + 1):
                self.page(connection)  # on this connection, as the traced one will be
                assert self.command("arm").strip() == "armed"
                self.page(connection)
                time.sleep(0.05)  # what the request does after its response (its log)
                events = [Event(*row) for row in json.loads(self.command("dump"))]
                if not any(spoils(event) for event in events):
                    if attempt > 1:
                        print(f"(traced at attempt {attempt}: background work used the store)")
                    return [event for event in events if event.where != "background"]
        raise RuntimeError("background work used the store in every attempt: no clean trace")


class Connection:
    """One keep-alive HTTP/1.1 connection that sends each request, head and body, in one write,
    as a browser sends a small POST. A client library may write the body apart from the head;
    whether the server then reads them together is a race, and a body read on its own enters the
    transport's callback and the request's reader again (two more re-entries): the trace would
    differ from run to run."""

    def __init__(self, url: str) -> None:
        self.host = url.removeprefix("http://")
        host, port = self.host.split(":")
        self.socket = socket.create_connection((host, int(port)))
        self.received = b""

    def __enter__(self) -> "Connection":
        return self

    def __exit__(self, *exc: object) -> None:
        self.socket.close()

    def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        """The response's status and body (it has a Content-Length: the API's answers do)."""
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {self.host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        )
        self.socket.sendall(head.encode() + body)
        while b"\r\n\r\n" not in self.received:
            self.receive()
        head_bytes, _, rest = self.received.partition(b"\r\n\r\n")
        status_line, *fields = head_bytes.decode("latin-1").split("\r\n")
        named = dict(field.split(":", 1) for field in fields)
        length = int(next(v for k, v in named.items() if k.strip().lower() == "content-length"))
        self.received = rest
        while len(self.received) < length:
            self.receive()
        answer, self.received = self.received[:length], self.received[length:]
        return int(status_line.split()[1]), answer

    def receive(self) -> None:
        chunk = self.socket.recv(65536)
        if not chunk:
            raise RuntimeError("the server closed the connection")
        self.received += chunk


def spoils(event: Event) -> bool:
    """Whether a background task used the store in the window: its work on the store's thread
    would be taken for the request's."""
    return event.where == "background" and package(event.path) == "store"


def visits(events: list[Event], resumptions: bool = False) -> list[str]:
    """The files entered, in order: consecutive entries into one file are one visit. With
    `resumptions`, a coroutine going on after an `await` enters its file again too."""
    return [event.path for event in first_calls(events, resumptions)]


def first_calls(events: list[Event], resumptions: bool = False) -> list[Event]:
    """The call that begins each visit (see `visits`)."""
    entered: list[Event] = []
    for event in events:
        if event.kind != "call" or (event.resumed and not resumptions):
            continue
        if not entered or entered[-1].path != event.path:
            entered.append(event)
    return entered


def reentries(events: list[Event]) -> list[str]:
    """Each visit to a file after its first: the file, the function entered, and the file it
    was entered from (the visit before it)."""
    seen: set[str] = set()
    found, before = [], ""
    for event in first_calls(events):
        if event.path in seen:
            found.append(f"{event.path}:{event.function} (after {before})")
        seen.add(event.path)
        before = event.path
    return found


def package(path: str) -> str:
    return path.split(os.sep, 1)[0]


def returns_into_server(events: list[Event], resumptions: bool = True) -> list[str]:
    """Each time control comes into `server/` from a lower package: a lower package's frame
    calling a `server/` function, or (with `resumptions`) resuming the one it awaits."""
    return [
        f"{event.above} -> {event.path}:{event.function}{' (resumed)' if event.resumed else ''}"
        for event in events
        if event.kind == "call"
        and (resumptions or not event.resumed)
        and package(event.path) == "server"
        and event.above
        and package(event.above) in LOWER
    ]


def report(name: str, events: list[Event], show_calls: bool) -> None:
    entered = visits(events)
    files = len(set(entered))
    with_resumptions = visits(events, resumptions=True)
    ups = returns_into_server(events)
    print(
        f"\n{name}: {files} files entered in {len(entered)} visits, "
        f"{len(entered) - files} re-entries "
        f"({len(with_resumptions)} visits, {len(with_resumptions) - files} re-entries counting "
        f"a coroutine resumed as entered again)"
    )
    for number, path in enumerate(entered, 1):
        print(f"  {number:3} {path}")
    print(f"{name}: the re-entries")
    for reentry in reentries(events):
        print(f"      {reentry}")
    entered_up = len(returns_into_server(events, resumptions=False))
    print(
        f"{name}: control comes into server/ from a lower package {len(ups)} times "
        f"({entered_up} calls, {len(ups) - entered_up} resumptions)"
    )
    for up in ups:
        print(f"      {up}")
    if show_calls:
        for event in events:
            if event.kind == "call":
                resumed = " (resumed)" if event.resumed else ""
                print(f"      {event.where:8} {event.path}:{event.line} {event.function}{resumed}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", action="store_true", help="list every function entered")
    parser.add_argument(
        "--setting",
        action="append",
        default=[],
        metavar="ALMANAC_NAME=VALUE",
        help="a setting of both servers (else `almanac serve`'s defaults: logs, metrics)",
    )
    args = parser.parse_args()
    settings = dict(setting.split("=", 1) for setting in args.setting)
    with Traced(settings).serving() as server:
        warm = server.traced_page()
    with Traced({**settings, "ALMANAC_RESPONSE_CACHE_BYTES": "0"}).serving() as server:
        cold = server.traced_page()
    report("warm page (its answer kept)", warm, args.calls)
    report("cold page (answer reuse off)", cold, args.calls)


if __name__ == "__main__":
    main()
