"""The reference deployment's proxy (deploy/Caddyfile, run by Caddy itself) in front of two real
`almanac serve` replicas: traffic goes to both, a replica told to stop (SIGTERM) is out of
rotation while it still drains, and no request fails meanwhile."""

import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import Served, almanac_process
from tests.deploy.test_deploy import DEPLOY, tool

DRAIN_SECONDS = 5
QUERY = {"query": "{ benchmarks(first: 1) { totalCount } }"}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture
def proxy_in_front(tmp_path: Path) -> Iterator[tuple[str, Served, Served]]:
    caddy = tool("caddy")
    settings = {
        "shutdown_drain_seconds": str(DRAIN_SECONDS),
        # The test sends requests without pause: no budget should refuse them.
        "anonymous_bucket_capacity": "1000000000",
        "anonymous_restore_rate": "1000000000",
    }
    with almanac_process(**settings) as first, almanac_process(**settings) as second:
        port = free_port()
        # The committed file, with this machine's addresses for the replicas and the proxy.
        config = (DEPLOY / "Caddyfile").read_text()
        config = config.replace(
            "reverse_proxy api-1:8000 api-2:8000",
            "reverse_proxy "
            f"{first.url.removeprefix('http://')} "
            f"{second.url.removeprefix('http://')}",
        )
        config = config.replace("\n:80 {", f"\n:{port} {{")
        assert f":{port} {{" in config
        assert first.url.removeprefix("http://") in config
        path = tmp_path / "Caddyfile"
        path.write_text(config)
        process = subprocess.Popen(
            [caddy, "run", "--config", str(path), "--adapter", "caddyfile"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                try:
                    if httpx.get(f"{url}/readyz").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                time.sleep(0.1)
            yield url, first, second
        finally:
            process.terminate()
            process.wait(timeout=10)


def replica_of(response: httpx.Response) -> str:
    """Which process answered: the IDs a process makes share its random prefix."""
    assert response.status_code == 200, response.text
    assert response.json()["data"]["benchmarks"]["totalCount"] > 0
    return response.headers["x-request-id"][:16]


def test_a_stopping_replica_leaves_rotation_while_it_drains(
    proxy_in_front: tuple[str, Served, Served],
) -> None:
    url, first, _ = proxy_in_front
    with httpx.Client(base_url=url, timeout=10) as http:
        answered = {replica_of(http.post("/graphql", json=QUERY)) for _ in range(60)}
        assert len(answered) == 2, "the proxy sends traffic to both replicas"
        assert http.get("/metrics").status_code == 404  # for Prometheus, not the public

        first.process.send_signal(signal.SIGTERM)
        stopped = time.monotonic()
        during_drain: set[str] = set()
        while time.monotonic() - stopped < DRAIN_SECONDS + 3:
            replica = replica_of(http.post("/graphql", json=QUERY))  # none fails
            # From the proxy's next health check (every 2 s) until the drain ends, the first
            # replica still serves, but gets nothing.
            if 2.6 < time.monotonic() - stopped < DRAIN_SECONDS - 0.5:
                assert first.process.poll() is None
                during_drain.add(replica)
        assert during_drain
        assert len(during_drain) == 1
        assert during_drain < answered
        assert first.process.wait(timeout=30) == -signal.SIGTERM
