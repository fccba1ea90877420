"""Slow, idle and oversized clients against a live server: each is let go with its status, and
the server keeps answering everyone else."""

import asyncio
import json
import socket
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from server.transport.http_protocol import OpenConnections
from tests.conftest import Served, almanac_process

LIMITS = {
    "header_timeout_seconds": "0.5",
    "body_timeout_seconds": "0.5",
    "keep_alive_timeout_seconds": "1",
    "max_connections": "30",
    "max_header_bytes": "4000",
    "max_header_lines": "30",
}
REQUEST = b"POST /graphql HTTP/1.1\r\nHost: almanac\r\nContent-Type: application/json\r\n"


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    with almanac_process(shutdown_drain_seconds="0", **LIMITS) as running:
        yield running


@pytest.fixture(scope="module")
def server(served: Served) -> tuple[str, int]:
    host, port = served.url.removeprefix("http://").split(":")
    return host, int(port)


def log_until(served: Served, seen: Callable[[str], bool]) -> list[str]:
    """The server's log lines up to the first one that `seen` finds (within a generous
    deadline: lines are written in batches)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        lines = list(served.log)
        for index, line in enumerate(lines):
            if seen(line):
                return lines[: index + 1]
        time.sleep(0.05)
    raise AssertionError("the line never came")


def connect(server: tuple[str, int]) -> socket.socket:
    client = socket.create_connection(server, timeout=5)
    return client


def answer(client: socket.socket) -> tuple[int, dict[str, Any], float]:
    """The status and JSON body the server sends before closing, and when it closed."""
    data = b""
    while chunk := client.recv(65536):
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, json.loads(body), time.monotonic()


def code(body: dict[str, Any]) -> str:
    return str(body["errors"][0]["extensions"]["code"])


def still_serving(server: tuple[str, int]) -> None:
    url = f"http://{server[0]}:{server[1]}/graphql"
    response = httpx.post(url, json={"query": "{ modelCardCoverage { labsRead } }"}, timeout=5)
    assert response.status_code == 200
    assert response.json()["data"] == {"modelCardCoverage": {"labsRead": 52}}


def test_an_idle_connection_is_let_go_after_the_head_deadline(server: tuple[str, int]) -> None:
    opened = time.monotonic()
    with connect(server) as client:
        status, body, closed = answer(client)
    assert status == 408
    assert code(body) == "REQUEST_TIMEOUT"
    assert 0.5 * 0.75 <= closed - opened < 3  # the deadline, jittered
    still_serving(server)


def test_a_trickled_head_is_let_go(server: tuple[str, int]) -> None:
    opened = time.monotonic()
    with connect(server) as client:
        for byte in REQUEST[:20]:
            client.sendall(bytes([byte]))  # Read and dropped once refused.
            time.sleep(0.1)
        status, body, closed = answer(client)
    assert status == 408
    assert code(body) == "REQUEST_TIMEOUT"
    assert closed - opened < 4


def test_a_trickled_body_is_let_go(server: tuple[str, int]) -> None:
    with connect(server) as client:
        client.sendall(REQUEST + b"Content-Length: 1000\r\n\r\n" + b'{"query": "{ __typename }"')
        status, body, _ = answer(client)
    assert status == 408
    assert code(body) == "REQUEST_TIMEOUT"
    assert "body did not arrive within 0.5 seconds" in body["errors"][0]["message"]
    still_serving(server)


def test_a_huge_header_is_refused(server: tuple[str, int]) -> None:
    with connect(server) as client:
        client.sendall(REQUEST + b"Authorization: Bearer " + b"x" * 1_000_000)
        status, body, _ = answer(client)
    assert status == 431
    assert code(body) == "REQUEST_HEADER_FIELDS_TOO_LARGE"
    # Complete, in one piece, and still too large.
    with connect(server) as client:
        client.sendall(REQUEST + b"X-Big: " + b"y" * 5_000 + b"\r\nContent-Length: 2\r\n\r\n{}")
        status, body, _ = answer(client)
    assert status == 431
    still_serving(server)


@pytest.mark.parametrize(
    "ending",
    [b"\r\n\r\n", b"\r\nContent-Length: 2\r\n\r\n{}", b"\r\n\r\nGET /healthz HTTP/1.1\r\n\r\n"],
    ids=["no-body", "body", "pipelined"],
)
def test_an_oversized_head_is_refused_without_a_traceback(
    served: Served, server: tuple[str, int], ending: bytes
) -> None:
    start = len(served.log)
    with connect(server) as client:
        client.sendall(REQUEST + b"X-Big: " + b"y" * 5_000 + ending)
        status, body, _ = answer(client)
    assert status == 431
    assert code(body) == "REQUEST_HEADER_FIELDS_TOO_LARGE"
    after = uuid.uuid4().hex
    response = httpx.get(f"{served.url}/healthz", headers={"X-Request-ID": after}, timeout=10)
    assert response.status_code == 200
    logged = log_until(served, lambda line: after in line)[start:]
    assert not [line for line in logged if "Traceback" in line or "ERROR" in line], logged


def test_too_many_header_lines_are_refused(server: tuple[str, int]) -> None:
    lines = b"".join(b"X-L%d: a\r\n" % i for i in range(40))  # 43 lines in all, some 500 bytes
    with connect(server) as client:
        client.sendall(REQUEST + lines + b"Content-Length: 2\r\n\r\n{}")
        status, body, _ = answer(client)
    assert status == 431
    assert "43 header lines; the most accepted is 30" in body["errors"][0]["message"]
    still_serving(server)


def test_connections_over_the_cap_are_refused_and_freed(server: tuple[str, int]) -> None:
    held = [connect(server) for _ in range(30)]
    try:
        time.sleep(0.1)
        with connect(server) as over:
            over.sendall(REQUEST + b"Content-Length: 2\r\n\r\n{}")
            status, body, _ = answer(over)
        assert status == 503
        assert code(body) == "SERVICE_UNAVAILABLE"
    finally:
        for client in held:
            client.close()
    time.sleep(0.2)
    still_serving(server)


def test_an_idle_keep_alive_connection_is_closed(server: tuple[str, int]) -> None:
    with httpx.Client(base_url=f"http://{server[0]}:{server[1]}") as http:
        first = http.post("/graphql", json={"query": "{ __typename }"})
        assert first.status_code == 200
        time.sleep(1.5)
        # The server closed the idle connection; the client opens a new one and carries on.
        second = http.post("/graphql", json={"query": "{ __typename }"})
        assert second.status_code == 200


class Socket(asyncio.BaseTransport):
    """A client's socket as the count sees it: open until closed."""

    def __init__(self) -> None:
        super().__init__()
        self.closed = False

    def is_closing(self) -> bool:
        return self.closed


def test_a_socket_that_left_the_protocol_counts_until_it_closes() -> None:
    count = OpenConnections()
    upgraded, plain = Socket(), Socket()
    assert count.opened(upgraded, 2) == 1
    assert count.opened(plain, 2) == 2
    count.closed(plain)  # its protocol saw it go
    assert count.opened(Socket(), 2) == 2  # the WebSocket's socket still holds a descriptor
    refused = Socket()
    assert count.opened(refused, 2) == 3  # over the cap: refused, then closed
    count.closed(refused)
    upgraded.closed = True  # closed later, under the WebSocket's own protocol
    assert count.opened(Socket(), 2) == 2  # found closed once the cap was reached
