"""Slow, idle and oversized clients against a live server: each is let go with its status, and
the server keeps answering everyone else."""

import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.conftest import live_almanac

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
def server() -> Iterator[tuple[str, int]]:
    with live_almanac(**LIMITS) as (url, _):
        host, port = url.removeprefix("http://").split(":")
        yield host, int(port)


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
