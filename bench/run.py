"""Throughput and latency of the contract request against its ceiling, on this machine.

The ceiling is a bare Starlette app under the same Uvicorn settings answering every request
with the very bytes the API returns for the contract request: no GraphQL, no database.
Both are served by one worker process, one after the other, loaded by wrk (Debian package
`wrk`) from a second process on loopback. Nothing here leaves 127.0.0.1.

Runs: the contract request POSTed; the same as a persisted query over GET (its hash and
variables in the URL); that GET revalidated with its ETag (304); and POSTed with answer reuse
off. Every run is metered (cost, budget, headers) with a bucket too large to refuse anything:
the bench measures what metering costs, not its refusals.

    .venv/bin/python bench/run.py [--seconds 10] [--connections 32]
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

import httpx

ROOT = Path(__file__).resolve().parent.parent
CONTRACT = ROOT / "contract" / "benchmark-page.graphql"
SLUG = "code-interpreter-benchmark-general"
HOST = "127.0.0.1"
UNREFUSING_BUDGET = {
    "ALMANAC_ANONYMOUS_BUCKET_CAPACITY": "1000000000",
    "ALMANAC_ANONYMOUS_RESTORE_RATE": "1000000000",
}


@dataclass(frozen=True)
class Result:
    name: str
    requests_per_second: float
    p50_ms: float
    p99_ms: float


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=32)
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk is needed: apt-get install wrk")

    query = contract_query()
    body = json.dumps({"query": query, "variables": {"slug": SLUG}})
    sha256 = hashlib.sha256(query.encode()).hexdigest()
    extensions = {"persistedQuery": {"version": 1, "sha256Hash": sha256}}
    persisted = "/graphql?" + urlencode(
        {"extensions": json.dumps(extensions), "variables": json.dumps({"slug": SLUG})}
    )
    with tempfile.TemporaryDirectory() as scratch:
        post = post_script(Path(scratch), body)
        get = Path(scratch) / "get.lua"
        get.write_text(f"wrk.path = {lua_string(persisted)}\n")
        with serve("server.app:app_from_environment", UNREFUSING_BUDGET) as url:
            response = httpx.post(f"{url}/graphql", content=body, headers=json_headers())
            response.raise_for_status()
            assert "errors" not in response.json(), response.text
            (Path(scratch) / "response.json").write_bytes(response.content)
            reused = load("contract request (POST)", f"{url}/graphql", post, args)
            registered = httpx.post(
                f"{url}/graphql",
                json={"query": query, "variables": {"slug": SLUG}, "extensions": extensions},
            )
            assert "errors" not in registered.json(), registered.text
            etag = httpx.get(f"{url}{persisted}").headers["ETag"]
            revalidate = Path(scratch) / "revalidate.lua"
            revalidate.write_text(
                f"wrk.path = {lua_string(persisted)}\n"
                f'wrk.headers["If-None-Match"] = {lua_string(etag)}\n'
            )
            by_hash = load("persisted query (GET)", f"{url}/graphql", get, args)
            not_modified = load("  ...with its ETag: 304", f"{url}/graphql", revalidate, args)
        no_reuse = {**UNREFUSING_BUDGET, "ALMANAC_RESPONSE_CACHE_BYTES": "0"}
        with serve("server.app:app_from_environment", no_reuse) as url:
            executed = load("  ...executed each time", f"{url}/graphql", post, args)
        with serve("bench.ceiling:app", {"BENCH_RESPONSE_FILE": f"{scratch}/response.json"}) as url:
            ceiling = load("ceiling (same bytes)", f"{url}/graphql", post, args)

    print(f"\n{'':26}{'req/s':>9}{'share':>8}{'p50 ms':>9}{'p99 ms':>9}")
    for result in (ceiling, reused, by_hash, not_modified, executed):
        share = result.requests_per_second / ceiling.requests_per_second
        print(
            f"{result.name:26}{result.requests_per_second:>9.0f}{share:>8.1%}"
            f"{result.p50_ms:>9.2f}{result.p99_ms:>9.2f}"
        )
    print(
        "\nBar: the contract request at >= 20% of the ceiling's throughput, one worker. "
        "'executed each time' turns answer reuse off (ALMANAC_RESPONSE_CACHE_BYTES=0): "
        "what a first request, or the first after a data change, costs."
    )


def contract_query() -> str:
    return CONTRACT.read_text(encoding="utf-8")


def json_headers() -> dict[str, str]:
    return {"Content-Type": "application/json"}


def post_script(folder: Path, body: str) -> Path:
    """A wrk script POSTing `body` as JSON."""
    script = folder / "post.lua"
    script.write_text(
        'wrk.method = "POST"\n'
        'wrk.headers["Content-Type"] = "application/json"\n'
        f"wrk.body = {lua_string(body)}\n"
    )
    return script


def lua_string(text: str) -> str:
    return "[==[" + text + "]==]"


class serve:
    """Runs one Uvicorn worker with the given app until the block ends."""

    def __init__(self, app: str, environment: dict[str, str] | None = None) -> None:
        self.app = app
        # A data directory of its own, made afresh (and seeded) for each server.
        self.data = tempfile.TemporaryDirectory(prefix="almanac-bench-")
        self.environment = {
            **os.environ,
            "ALMANAC_DATA_DIR": self.data.name,
            **(environment or {}),
        }
        self.port = free_port()

    def __enter__(self) -> str:
        command = [
            sys.executable,
            "-m",
            "uvicorn",
            self.app,
            "--host",
            HOST,
            "--port",
            str(self.port),
            "--workers",
            "1",
            "--log-level",
            "warning",
            "--no-access-log",
        ]
        if self.app.endswith("app_from_environment"):
            command.append("--factory")
        self.process = subprocess.Popen(command, cwd=ROOT, env=self.environment)
        url = f"http://{HOST}:{self.port}"
        try:
            wait_until_up(url, 30)
        except RuntimeError:
            self.process.kill()
            raise
        return url

    def __exit__(self, *exc: object) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)
        self.data.cleanup()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


def load(name: str, url: str, script: Path, args: argparse.Namespace) -> Result:
    # A short warm-up, then the measured run.
    base = ["wrk", "-t1", f"-c{args.connections}", "-s", str(script), "--latency"]
    subprocess.run([*base, "-d2s", url], check=True, capture_output=True)
    output = subprocess.run(
        [*base, f"-d{args.seconds}s", url], check=True, capture_output=True, text=True
    ).stdout
    if re.search(r"Non-2xx", output) and "304" not in name:
        raise RuntimeError(f"{name}: some responses failed\n{output}")
    return Result(
        name=name,
        requests_per_second=float(re.search(r"Requests/sec:\s+([\d.]+)", output)[1]),  # type: ignore[index]
        p50_ms=latency(output, "50%"),
        p99_ms=latency(output, "99%"),
    )


def latency(output: str, percentile: str) -> float:
    match = re.search(rf"^\s+{re.escape(percentile)}\s+([\d.]+)(us|ms|s)\s*$", output, re.M)
    if match is None:
        raise RuntimeError(f"no {percentile} latency in wrk's output:\n{output}")
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}[match[2]]
    return float(match[1]) * scale


def wait_until_up(url: str, seconds: float = 120) -> None:
    """Until the server at `url` answers /healthz, within `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/healthz").status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.2)
    raise RuntimeError(f"the server at {url} did not start")


if __name__ == "__main__":
    main()
