"""Graceful shutdown of `almanac serve`: on SIGTERM /readyz turns 503 while requests are still
served, then in-flight requests finish and the process ends."""

import json
import signal
import socket
import time
from urllib.parse import urlsplit

import httpx

from tests.conftest import almanac_process

QUERY = json.dumps({"query": "{ benchmarks(first: 2) { totalCount } }"}).encode()
DRAIN_SECONDS = 1.5


def request_head(host: str, length: int) -> bytes:
    return (
        f"POST /graphql HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {length}\r\n\r\n"
    ).encode()


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
        time.sleep(0.2)
        served.process.send_signal(signal.SIGTERM)
        signalled = time.monotonic()

        # Draining: not ready, but still serving new requests.
        time.sleep(0.3)
        ready = httpx.get(f"{served.url}/readyz")
        assert ready.status_code == 503
        assert ready.json() == {"status": "unavailable", "reason": "shutting down"}
        still_served = httpx.post(
            f"{served.url}/graphql", content=QUERY, headers={"content-type": "application/json"}
        )
        assert still_served.json()["data"]["benchmarks"]["totalCount"] > 0

        # After the drain the listener closes, and the request in flight still gets its answer.
        while time.monotonic() - signalled < DRAIN_SECONDS + 0.5:
            time.sleep(0.1)
        try:
            httpx.get(f"{served.url}/healthz", timeout=1)
            raise AssertionError("new connections are accepted after the drain")
        except httpx.TransportError:
            pass
        in_flight.sendall(QUERY[10:])
        answer = answer_of(in_flight)
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200")
        assert json.loads(body)["data"]["benchmarks"]["totalCount"] > 0
        assert served.process.wait(timeout=10) == -signal.SIGTERM
        assert any("SIGTERM: draining for 1.5 s" in line for line in served.log)
        # The request lines still waiting to be written were written before the end.
        deadline = time.monotonic() + 5
        while sum("POST /graphql 200" in line for line in served.log) < 2:
            assert time.monotonic() < deadline, "".join(served.log)
            time.sleep(0.05)


def test_an_in_flight_request_past_the_limit_is_cut_off() -> None:
    with almanac_process(shutdown_drain_seconds="0", shutdown_timeout_seconds="1") as served:
        address = urlsplit(served.url)
        stuck = socket.create_connection((address.hostname, address.port))
        stuck.sendall(request_head(address.netloc, len(QUERY)) + QUERY[:10])
        time.sleep(0.2)
        started = time.monotonic()
        served.process.send_signal(signal.SIGTERM)
        assert served.process.wait(timeout=10) == -signal.SIGTERM
        assert time.monotonic() - started < 5
        assert any("timeout graceful shutdown exceeded" in line for line in served.log)
        stuck.close()
