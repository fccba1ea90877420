"""Graceful shutdown of `almanac serve`: on SIGTERM /readyz turns 503 while requests are still
served, then in-flight requests finish and the process ends."""

import json
import signal
import socket
import time
from collections.abc import Callable
from typing import TypeVar
from urllib.parse import urlsplit

import httpx

from tests.conftest import almanac_process

T = TypeVar("T")

QUERY = json.dumps({"query": "{ benchmarks(first: 2) { totalCount } }"}).encode()
DRAIN_SECONDS = 4.0  # long enough for a loaded machine to ask twice while it lasts


def request_head(host: str, length: int) -> bytes:
    return (
        f"POST /graphql HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {length}\r\n\r\n"
    ).encode()


def poll(ask: Callable[[], T], done: Callable[[T], bool], seconds: float = 30) -> T:
    """Ask until the answer is `done` (a deadline only so that a wrong answer fails, not hangs)."""
    deadline = time.monotonic() + seconds
    while not done(answer := ask()):
        assert time.monotonic() < deadline, f"still {answer!r}"
        time.sleep(0.05)
    return answer


def accepts(url: str) -> bool:
    try:
        httpx.get(url, timeout=1)
    except httpx.TransportError:
        return False
    return True


def answer_of(connection: socket.socket) -> bytes:
    received = b""
    while chunk := connection.recv(65536):
        received += chunk
    return received


def test_sigterm_drains_then_lets_in_flight_requests_finish() -> None:
    with almanac_process(shutdown_drain_seconds=str(DRAIN_SECONDS)) as served:
        address = urlsplit(served.url)
        assert httpx.get(f"{served.url}/readyz").status_code == 200

        # A request in flight: its head and half its body are in when the signal comes.
        in_flight = socket.create_connection((address.hostname, address.port))
        in_flight.sendall(request_head(address.netloc, len(QUERY)) + QUERY[:10])
        time.sleep(0.5)
        served.process.send_signal(signal.SIGTERM)

        # Draining: not ready (from when the signal is handled), but still serving new requests.
        ready = poll(lambda: httpx.get(f"{served.url}/readyz"), lambda r: r.status_code == 503)
        assert ready.json() == {"status": "unavailable", "reason": "shutting down"}
        still_served = httpx.post(
            f"{served.url}/graphql", content=QUERY, headers={"content-type": "application/json"}
        )
        assert still_served.json()["data"]["benchmarks"]["totalCount"] > 0

        # After the drain the listener closes, and the request in flight still gets its answer.
        poll(lambda: accepts(f"{served.url}/healthz"), lambda accepted: not accepted)
        in_flight.sendall(QUERY[10:])
        answer = answer_of(in_flight)
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200")
        assert json.loads(body)["data"]["benchmarks"]["totalCount"] > 0
        assert served.process.wait(timeout=10) == -signal.SIGTERM
        assert any(f"SIGTERM: draining for {DRAIN_SECONDS:.1f} s" in line for line in served.log)
        # The request lines still waiting to be written were written before the end.
        poll(lambda: sum("POST /graphql 200" in line for line in served.log), lambda n: n >= 2)


def test_an_in_flight_request_past_the_limit_is_cut_off() -> None:
    with almanac_process(shutdown_drain_seconds="0", shutdown_timeout_seconds="1") as served:
        address = urlsplit(served.url)
        stuck = socket.create_connection((address.hostname, address.port))
        stuck.sendall(request_head(address.netloc, len(QUERY)) + QUERY[:10])
        time.sleep(0.2)
        served.process.send_signal(signal.SIGTERM)
        # Cut off after 1 s: without the limit, the stuck request would hold the process.
        assert served.process.wait(timeout=30) == -signal.SIGTERM
        assert any("timeout graceful shutdown exceeded" in line for line in served.log)
        stuck.close()
