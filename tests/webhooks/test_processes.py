"""Webhooks sent by real server processes (`almanac serve` on the embedded store): a process
killed mid-delivery loses none, and two processes on one data directory send each event once."""

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from server.api_keys import ADMIN_KEY_FILE
from tests.webhook_receiver import Receiver, webhook_receiver

SETTINGS = {
    "ALMANAC_WEBHOOK_ALLOW_HTTP": "true",
    "ALMANAC_WEBHOOK_ALLOW_PRIVATE": "true",
    "ALMANAC_WEBHOOK_BACKOFF_SECONDS": "0.05",
    "ALMANAC_WEBHOOK_MAX_BACKOFF_SECONDS": "0.2",
    "ALMANAC_WEBHOOK_TIMEOUT_SECONDS": "1.5",
    "ALMANAC_WEBHOOK_LEASE_SECONDS": "3",  # a killed process's endpoints are taken over soon
    "ALMANAC_SHUTDOWN_DRAIN_SECONDS": "0",
}
CREATE = """mutation($url: String!) {
  createWebhook(input: {url: $url, kinds: [LAB_CREATED]}) { secret webhook { id } } }"""


@dataclass
class Server:
    process: subprocess.Popen[str]
    url: str


@contextmanager
def serving(data_dir: Path) -> Iterator[Server]:
    """`almanac serve` on `data_dir`, once it has answered /healthz."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    environment = {k: v for k, v in os.environ.items() if not k.startswith("ALMANAC_")}
    environment |= {**SETTINGS, "ALMANAC_DATA_DIR": str(data_dir)}
    process = subprocess.Popen(
        [sys.executable, "-m", "server.cli", "serve", "--port", str(port)],
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    threading.Thread(target=lambda: process.stderr and process.stderr.read(), daemon=True).start()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        assert process.poll() is None, "the server did not start"
        try:
            if httpx.get(f"{url}/healthz").status_code == 200:
                break
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, "the server did not answer in time"
        time.sleep(0.05)
    try:
        yield Server(process, url)
    finally:
        if process.poll() is None:
            process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:  # a server that does not stop is not left running
            process.kill()
            process.wait()


def graphql(server: str, key: str, query: str, **variables: str) -> dict[str, object]:
    response = httpx.post(
        f"{server}/graphql",
        json={"query": query, "variables": variables},
        headers={"Authorization": f"Bearer {key}"},
        timeout=30,
    )
    body = response.json()
    assert "errors" not in body, body
    data: dict[str, object] = body["data"]
    return data


def subscribe(url: str, key: str, receiver: Receiver) -> str:
    made = graphql(url, key, CREATE, url=receiver.url)["createWebhook"]
    assert isinstance(made, dict)
    receiver.secret = made["secret"]
    webhook_id: str = made["webhook"]["id"]
    return webhook_id


def record_labs(url: str, key: str, count: int) -> list[str]:
    slugs = [f"lab-{number}" for number in range(count)]
    for slug in slugs:
        graphql(
            url, key, f'mutation {{ createLab(input: {{slug: "{slug}", name: "L"}}) {{ slug }} }}'
        )
    return slugs


def first_seen(receiver: Receiver) -> list[str]:
    """The labs of the events received, each once, in the order each first came."""
    slugs: list[str] = []
    for event in list(receiver.events):
        if event["subject"]["slug"] not in slugs:
            slugs.append(event["subject"]["slug"])
    return slugs


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with webhook_receiver() as received:
        yield received


def test_a_process_killed_mid_delivery_loses_none(tmp_path: Path, receiver: Receiver) -> None:
    receiver.delay = 0.3  # each delivery takes a while: the kill lands in the middle of one
    with serving(tmp_path) as first:
        key = (tmp_path / ADMIN_KEY_FILE).read_text().strip()
        subscribe(first.url, key, receiver)
        slugs = record_labs(first.url, key, 6)
        receiver.wait_for(lambda r: len(r.requests) >= 2)
        os.kill(first.process.pid, signal.SIGKILL)
        first.process.wait()
    assert len(first_seen(receiver)) < len(slugs), "the kill came after every delivery"
    with serving(tmp_path):
        receiver.wait_for(lambda r: len(first_seen(r)) == len(slugs), seconds=60)
    assert first_seen(receiver) == slugs  # all of them, in the feed's order
    assert receiver.unverified == 0


def test_two_processes_send_each_event_once(tmp_path: Path, receiver: Receiver) -> None:
    with serving(tmp_path) as one, serving(tmp_path) as other:
        key = (tmp_path / ADMIN_KEY_FILE).read_text().strip()
        subscribe(one.url, key, receiver)
        slugs = record_labs(other.url, key, 8)
        receiver.wait_for(lambda r: len(first_seen(r)) == len(slugs), seconds=60)
        statuses = """query { webhooks { nodes { deliveries(first: 20) { status } } } }"""
        data = graphql(one.url, key, statuses)["webhooks"]
        assert isinstance(data, dict)
    assert [d["status"] for d in data["nodes"][0]["deliveries"]] == ["DELIVERED"] * 8
    assert first_seen(receiver) == slugs
    assert len(receiver.ids) == len(set(receiver.ids)) == 8  # each sent once


def test_a_slow_receiver_does_not_hold_up_shutdown(tmp_path: Path, receiver: Receiver) -> None:
    """A receiver answering a byte at a time (each within any read timeout) is cut off at the
    attempt's deadline (1.5 s here): SIGTERM stops the server within it."""
    receiver.trickle = 0.1
    with serving(tmp_path) as server:
        key = (tmp_path / ADMIN_KEY_FILE).read_text().strip()
        subscribe(server.url, key, receiver)
        record_labs(server.url, key, 1)
        receiver.wait_for(lambda r: len(r.requests) >= 1)  # an attempt in flight
        server.process.send_signal(signal.SIGTERM)
        server.process.wait(timeout=30)  # Uvicorn ends by raising the signal again
