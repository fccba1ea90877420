"""How page costs grow with the almanac: a SYNTHETIC almanac (bench/synthetic.py) at several
sizes, on the embedded store, answer reuse off.

For each size: `almanac import` of the whole file into a new data directory (timed), then a
server on it. Then, interleaved across the servers (one request to each in turn), cold p50s of:
- the site's page query for a benchmark in the big category (150 benchmarks);
- the catalog, `benchmarks(first: 100)` with each one's tracked leader;
- the page of the model listed on every leaderboard, `results(first: 20)`.
Then, on the largest: /healthz p99 while one client sends page requests without pause, the
server's RSS, and the data directory's size.

Bars (issue 9): each p50 at the largest size at most 2x the smallest's; the import at most
12x; RSS at most 500 MB; /healthz p99 at most 50 ms.

    .venv/bin/python bench/scale.py [--sizes 1000 3000 10000] [--requests 30]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

import httpx

from bench.run import CONTRACT, ROOT, free_port, wait_until_up
from bench.soak import rss_mb
from bench.synthetic import synthetic_almanac

PAGE_SLUG = "synthetic-benchmark-1"  # in the big category
CATALOG = (
    "{ benchmarks(first: 100) { totalCount nodes { slug trackedLeader { modelName score } } } }"
)
MODEL = """{ model(slug: "synthetic-model-0") {
  name results(first: 20) { rank score benchmark { name } } } }"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 3000, 10000])
    parser.add_argument("--requests", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="almanac-scale-") as scratch:
        servers, imports = [], {}
        try:
            for size in args.sizes:
                data_dir = Path(scratch) / f"data-{size}"
                file = Path(scratch) / f"synthetic-{size}.json"
                file.write_text(json.dumps(synthetic_almanac(size)))
                imports[size] = timed_import(file, data_dir)
                print(f"import {size:>6}: {imports[size]:7.1f} s", flush=True)
                servers.append((size, data_dir, start(data_dir)))
            report(servers, imports, args.requests)
        finally:
            for _, _, (process, _) in servers:
                process.terminate()
                process.wait()


def environment(data_dir: Path, **settings: str) -> dict[str, str]:
    kept = {k: v for k, v in os.environ.items() if not k.startswith("ALMANAC_")}
    return {
        **kept,
        "ALMANAC_DATA_DIR": str(data_dir),
        "ALMANAC_RESPONSE_CACHE_BYTES": "0",
        "ALMANAC_ANONYMOUS_BUCKET_CAPACITY": "1000000000",
        "ALMANAC_ANONYMOUS_RESTORE_RATE": "1000000000",
        **settings,
    }


def timed_import(file: Path, data_dir: Path) -> float:
    began = time.monotonic()
    subprocess.run(
        [sys.executable, "-m", "server.cli", "import", str(file), "--by", "bench"],
        cwd=ROOT,
        env=environment(data_dir),
        check=True,
        capture_output=True,
    )
    return time.monotonic() - began


def start(data_dir: Path, **settings: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "server.cli", "serve", "--port", str(port)],
        cwd=ROOT,
        env=environment(data_dir, ALMANAC_LOG_LEVEL="warning", **settings),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    wait_until_up(url)
    return process, url


def report(
    servers: list[tuple[int, Path, tuple[subprocess.Popen[bytes], str]]],
    imports: dict[int, float],
    requests: int,
) -> None:
    page = {"query": CONTRACT.read_text(), "variables": {"slug": PAGE_SLUG}}
    queries = {"page": page, "catalog": {"query": CATALOG}, "model": {"query": MODEL}}
    timings: dict[tuple[str, int], list[float]] = {}
    with httpx.Client(timeout=60) as http:
        for name, body in queries.items():
            for _ in range(requests):
                for size, _, (_, url) in servers:
                    began = time.perf_counter()
                    response = http.post(f"{url}/graphql", json=body)
                    elapsed = (time.perf_counter() - began) * 1000
                    assert "errors" not in response.json(), response.text[:300]
                    timings.setdefault((name, size), []).append(elapsed)
    sizes = [size for size, _, _ in servers]
    print(f"\n{'cold p50, ms':14}" + "".join(f"{size:>10}" for size in sizes) + f"{'ratio':>8}")
    for name in queries:
        p50s = [statistics.median(timings[(name, size)]) for size in sizes]
        print(f"{name:14}" + "".join(f"{p:>10.1f}" for p in p50s) + f"{p50s[-1] / p50s[0]:>8.2f}")
    print(
        f"{'import, s':14}"
        + "".join(f"{imports[s]:>10.1f}" for s in sizes)
        + f"{imports[sizes[-1]] / imports[sizes[0]]:>8.2f}"
    )
    largest, data_dir, (process, url) = servers[-1]
    print(f"\nAt {largest}: /healthz p99 under cold page requests: {healthz_p99(url, page):.1f} ms")
    print(f"server RSS: {rss_mb(process.pid):.0f} MB")
    size = sum(path.stat().st_size for path in data_dir.iterdir())
    print(f"data directory: {size / 2**20:.0f} MB")


def healthz_p99(url: str, page: Mapping[str, object]) -> float:
    """/healthz latency while another process sends page requests without pause."""
    hammer = subprocess.Popen(
        [sys.executable, "-c", HAMMER, f"{url}/graphql", json.dumps(page)],
        stdout=subprocess.DEVNULL,
    )
    latencies = []
    try:
        time.sleep(1)
        with httpx.Client(timeout=60) as http:
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                began = time.perf_counter()
                http.get(f"{url}/healthz")
                latencies.append((time.perf_counter() - began) * 1000)
                time.sleep(0.01)
    finally:
        hammer.terminate()
        hammer.wait()
    return statistics.quantiles(latencies, n=100)[98]


# A client of its own process, so that its work never delays the measuring one.
HAMMER = """
import json, sys, httpx
with httpx.Client(timeout=60) as http:
    while True:
        http.post(sys.argv[1], json=json.loads(sys.argv[2]))
"""


if __name__ == "__main__":
    main()
