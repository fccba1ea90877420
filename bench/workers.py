"""`almanac serve --workers N` on the embedded store: throughput and CPU per request for 1 and
then 2 workers on the same data directory, and how soon a write through one worker is seen by
the other.

Each server is the real command (`almanac serve`, the embedded store, a budget refusing
nothing), loaded by wrk (Debian package `wrk`) from a second process on loopback with the
contract request: once with answers reused, once executed each time
(ALMANAC_RESPONSE_CACHE_BYTES=0), in interleaved rounds (1 worker, 2 workers, 1, 2, ...: a
busy neighbour on a shared machine weighs on both alike), medians printed. CPU is the user
and system time of the server's processes (the command and its workers, from /proc) over the
measured run, per request answered.

Then, with 2 workers: a description written through one worker (the admin key), and read on
new connections until a worker other than the writer answers with it; the delay from the
write's answer to that read, median over `--writes` writes. Which worker answered a request
is told by its `X-Request-ID`: each process gives its IDs a random prefix of its own.

    .venv/bin/python bench/workers.py [--seconds 10] [--rounds 3] [--connections 32] [--writes 15]
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from bench.run import HOST, ROOT, SLUG, UNREFUSING_BUDGET, contract_query, free_port, post_script

TICKS = os.sysconf("SC_CLK_TCK")
PROCESS_PREFIX = (
    16  # hex characters of an X-Request-ID that name the process (server.observability.logs)
)
READ = {"query": f'{{ benchmark(slug: "{SLUG}") {{ description }} }}'}
DESCRIBE = (
    "mutation($text: String!) { "
    f'updateBenchmark(slug: "{SLUG}", input: {{description: $text}}) {{ description }} }}'
)


@dataclass(frozen=True)
class Load:
    requests_per_second: float
    cpu_ms_per_request: float


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--writes", type=int, default=15)
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk is needed: apt-get install wrk")

    body = json.dumps({"query": contract_query(), "variables": {"slug": SLUG}})
    results: dict[tuple[str, int], list[Load]] = {}
    delays: list[float] = []
    with tempfile.TemporaryDirectory(prefix="almanac-bench-workers-") as scratch:
        data = Path(scratch) / "data"  # one data directory, seeded by the first server
        script = post_script(Path(scratch), body)
        for round in range(args.rounds):
            for reuse, settings in (
                ("answers reused", {}),
                ("executed each time", {"ALMANAC_RESPONSE_CACHE_BYTES": "0"}),
            ):
                for workers in (1, 2):
                    with serving(data, workers, settings) as (url, process):
                        measured = load(url, process, script, args)
                        results.setdefault((reuse, workers), []).append(measured)
                        if workers == 2 and not settings and round == 0:
                            delays = visibility(url, data, args.writes)

    rates = {run: median(loads, "requests_per_second") for run, loads in results.items()}
    print(f"\n{'':34}{'req/s':>9}{'CPU ms/req':>12}   (medians of {args.rounds} rounds)")
    for (reuse, workers), loads in results.items():
        print(
            f"{reuse + f', {workers} worker' + ('s' if workers > 1 else ''):34}"
            f"{rates[reuse, workers]:>9.0f}{median(loads, 'cpu_ms_per_request'):>12.3f}"
            f"   req/s by round: {', '.join(f'{each.requests_per_second:.0f}' for each in loads)}"
        )
    for reuse in ("answers reused", "executed each time"):
        print(f"2 workers / 1, {reuse}: {rates[reuse, 2] / rates[reuse, 1]:.2f}x")
    print(
        f"\nA write through one worker seen by the other: median {statistics.median(delays):.0f}"
        f" ms, max {max(delays):.0f} ms, over {len(delays)} writes (bar: within 1 s)."
        f"\nCores here: {os.cpu_count()} (wrk takes one of them too)."
    )


def median(loads: list[Load], figure: str) -> float:
    return statistics.median(float(getattr(each, figure)) for each in loads)


@contextmanager
def serving(
    data: Path, workers: int, settings: Mapping[str, str] = {}, starting_seconds: float = 60
) -> Iterator[tuple[str, int]]:
    """`almanac serve --workers N` on `data`, with `settings` (ALMANAC_ variables) beside a
    budget refusing nothing, until the block ends: its URL and process ID, once every worker
    answers (within `starting_seconds`)."""
    port = free_port()
    environment = {
        **os.environ,
        **UNREFUSING_BUDGET,
        "ALMANAC_DATA_DIR": str(data),
        "ALMANAC_LOG_LEVEL": "warning",
        "ALMANAC_SHUTDOWN_DRAIN_SECONDS": "0",
        **settings,
    }
    command = [sys.executable, "-m", "server.cli", "serve", "--port", str(port)]
    process = subprocess.Popen(
        [*command, "--workers", str(workers)], cwd=ROOT, env=environment, stdout=subprocess.DEVNULL
    )
    url = f"http://{HOST}:{port}"
    try:
        wait_for(url, workers, starting_seconds)
        yield url, process.pid
    finally:
        process.terminate()
        process.wait(timeout=60)


def wait_for(url: str, workers: int, seconds: float = 60) -> None:
    """Until `workers` processes answer (each names its request IDs with a prefix of its own),
    within `seconds`."""
    seen: set[str] = set()
    deadline = time.monotonic() + seconds
    while len(seen) < workers:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{workers} workers did not start at {url}")
        try:
            seen.add(answering(httpx.get(f"{url}/healthz")))
        except httpx.TransportError:
            time.sleep(0.1)


def answering(response: httpx.Response) -> str:
    return response.headers["x-request-id"][:PROCESS_PREFIX]


def load(url: str, server: int, script: Path, args: argparse.Namespace) -> Load:
    """A short warm-up, then the measured run, with the CPU the server's processes spent."""
    base = ["wrk", "-t1", f"-c{args.connections}", "-s", str(script)]
    subprocess.run([*base, "-d2s", f"{url}/graphql"], check=True, capture_output=True)
    before = cpu_seconds(server)
    output = subprocess.run(
        [*base, f"-d{args.seconds}s", f"{url}/graphql"], check=True, capture_output=True, text=True
    ).stdout
    spent = cpu_seconds(server) - before
    if "Non-2xx" in output:
        raise RuntimeError(f"some responses failed\n{output}")
    found = re.search(r"(\d+) requests in ([\d.]+)(m?s)", output)
    assert found is not None, output
    requests = int(found[1])
    seconds = float(found[2]) * (60 if found[3] == "m" else 1)
    return Load(requests / seconds, spent * 1000 / requests)


def cpu_seconds(root: int) -> float:
    """User and system CPU of `root` and every process under it, from /proc."""
    children: dict[int, list[int]] = {}
    times: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # ended meanwhile
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        pid, parent = int(entry.name), int(fields[1])
        children.setdefault(parent, []).append(pid)
        times[pid] = (int(fields[11]) + int(fields[12])) / TICKS
    total, waiting = 0.0, [root]
    while waiting:
        pid = waiting.pop()
        total += times.get(pid, 0.0)
        waiting += children.get(pid, [])
    return total


def admin_key(data: Path) -> str:
    """A new admin key for the almanac in `data`, made by the CLI (whether or not a server
    has started on it yet)."""
    made = subprocess.run(
        [
            sys.executable,
            "-m",
            "server.cli",
            "keys",
            "create",
            "--name",
            "bench",
            "--scope",
            "admin",
        ],
        cwd=ROOT,
        env={**os.environ, "ALMANAC_DATA_DIR": str(data)},
        capture_output=True,
        text=True,
        check=True,
    )
    return made.stdout.strip()


def visibility(url: str, data: Path, writes: int) -> list[float]:
    """For each write: ms from its answer to the first read by another worker showing it."""
    key = admin_key(data)
    delays = []
    for n in range(writes):
        text = f"Described through one worker ({n}, {time.time()})"
        for _ in range(10):  # both workers keep the answer before it changes
            httpx.post(f"{url}/graphql", json=READ)
        written = httpx.post(
            f"{url}/graphql",
            json={"query": DESCRIBE, "variables": {"text": text}},
            headers={"Authorization": f"Bearer {key}"},
        )
        done = time.perf_counter()
        assert written.json()["data"]["updateBenchmark"]["description"] == text, written.text
        writer = answering(written)
        while True:  # each read on a new connection, which either worker may take
            read = httpx.post(f"{url}/graphql", json=READ)
            seen = read.json()["data"]["benchmark"]["description"]
            if answering(read) != writer and seen == text:
                delays.append((time.perf_counter() - done) * 1000)
                break
            if time.perf_counter() - done > 30:
                raise RuntimeError("the other worker never saw the write")
    return delays


if __name__ == "__main__":
    main()
