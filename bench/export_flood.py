"""What an export flood costs the server: RSS while 30 anonymous clients download
`/export.ndjson` at once from a SYNTHETIC almanac (bench/synthetic.py) of 1,000 benchmarks.

The almanac is imported with `almanac import` into a new data directory and served by
`almanac serve` on a free loopback port with the default budgets. Each client comes from an
address of its own (`X-Forwarded-For`, which the server believes from loopback), so each has
its own budget, as 30 attackers would. The server's RSS is read from /proc/<pid>/status: idle
(after one export, so that what is loaded once is counted as idle), then sampled every 10 ms
during the flood. Two floods: with the default export bound (a few stream, the rest get 503),
and with the bound raised to the number of clients (every export streams at once). Bar (issue
17): the peak grows at most 50 MB over idle.

    .venv/bin/python bench/export_flood.py [--benchmarks 1000] [--clients 30] [--root CHECKOUT]

`--root` serves another checkout's code (e.g. /work/main) for a before/after comparison.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from bench.run import ROOT, free_port, wait_until_up
from bench.soak import rss_mb
from bench.synthetic import synthetic_almanac

BAR_MB = 50.0


def measure_export_flood(
    benchmarks: int = 1000, clients: int = 30, root: Path = ROOT, **settings: str
) -> dict[str, Any]:
    """Import a SYNTHETIC almanac, serve it, flood it with `clients` concurrent anonymous
    exports: the server's RSS idle and at its peak (MB), and the answers' statuses."""
    with tempfile.TemporaryDirectory(prefix="almanac-export-flood-") as scratch:
        data_dir = Path(scratch) / "data"
        file = Path(scratch) / "synthetic.json"
        file.write_text(json.dumps(synthetic_almanac(benchmarks)))
        environment = _environment(data_dir, settings)
        began = time.monotonic()
        subprocess.run(
            [sys.executable, "-m", "server.cli", "import", str(file), "--by", "bench"],
            cwd=root,
            env=environment,
            check=True,
            capture_output=True,
        )
        imported = time.monotonic() - began
        file.unlink()
        port = free_port()
        server = subprocess.Popen(
            [sys.executable, "-m", "server.cli", "serve", "--port", str(port)],
            cwd=root,
            env={**environment, "ALMANAC_LOG_LEVEL": "warning"},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            url = f"http://127.0.0.1:{port}"
            wait_until_up(url)
            with httpx.Client(timeout=600) as http:
                first = http.get(f"{url}/export.ndjson")
                first.raise_for_status()
            time.sleep(2)  # the first export's budget refills a little; its memory settles
            idle = rss_mb(server.pid)
            peak, statuses, seconds = _flood(server.pid, f"{url}/export.ndjson", clients)
        finally:
            server.terminate()
            server.wait()
    return {
        "benchmarks": benchmarks,
        "clients": clients,
        "import_seconds": round(imported, 1),
        "export_bytes": len(first.content),
        "idle_rss_mb": round(idle, 1),
        "peak_rss_mb": round(peak, 1),
        "growth_mb": round(peak - idle, 1),
        "flood_seconds": round(seconds, 2),
        "statuses": dict(sorted(statuses.items())),
        "within_bar": peak - idle <= BAR_MB,
    }


def _environment(data_dir: Path, settings: dict[str, str]) -> dict[str, str]:
    kept = {k: v for k, v in os.environ.items() if not k.startswith("ALMANAC_")}
    return {**kept, "ALMANAC_DATA_DIR": str(data_dir), **settings}


def _flood(pid: int, url: str, clients: int) -> tuple[float, Counter[int], float]:
    """`clients` exports at once, each read to its end; the peak RSS sampled meanwhile."""
    peak = rss_mb(pid)
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, rss_mb(pid))
            time.sleep(0.01)

    def export(client: int) -> int:
        address = {"X-Forwarded-For": f"10.0.{client // 250}.{client % 250 + 1}"}
        with (
            httpx.Client(timeout=600) as http,
            http.stream("GET", url, headers=address) as response,
        ):
            for _chunk in response.iter_bytes():
                pass
            return response.status_code

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    began = time.monotonic()
    try:
        with ThreadPoolExecutor(max_workers=clients) as pool:
            statuses = Counter(pool.map(export, range(clients)))
    finally:
        done.set()
        sampler.join()
    return peak, statuses, time.monotonic() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmarks", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=30)
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose code serves")
    args = parser.parse_args()
    floods = {
        "default export bound": {},
        f"{args.clients} exports allowed at once": {
            "ALMANAC_MAX_CONCURRENT_EXPORTS": str(args.clients)
        },
    }
    for title, settings in floods.items():
        figures = measure_export_flood(
            args.benchmarks, args.clients, args.root.resolve(), **settings
        )
        print(f"\n{title}:")
        for name, value in figures.items():
            print(f"  {name:16} {value}")
        verdict = "within" if figures["within_bar"] else "OVER"
        print(f"  RSS grew {figures['growth_mb']} MB over idle: {verdict} the {BAR_MB:g} MB bar")


if __name__ == "__main__":
    main()
