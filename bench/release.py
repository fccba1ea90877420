"""A release of a SYNTHETIC almanac (bench/synthetic.py, 10,000 benchmarks by default): what
making it costs in time against `almanac export` of the same data, and in memory while it is
made and while it is downloaded.

The almanac is imported with `almanac import` into a new data directory. Then, in one process
on that store, timed: the export written as `almanac export FILE.ndjson` writes it
(`editing.write_export`), then the release made by `schema.create_release` (what `almanac
release create` and the createRelease mutation run), while a thread samples the process's RSS
every 10 ms from just before (after the export). Then
`almanac serve` serves the data directory: the server's RSS idle (after one small download), and
its peak while a client downloads the release's NDJSON, its manifest and the first 200
leaderboards' CSVs, each read to its end.

Bars (issue 29): memory grows at most 100 MB while the release is made and while it is
downloaded; making it takes at most 2x the export's time.

    .venv/bin/python bench/release.py [--benchmarks 10000]
"""

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from bench.export_flood import wait_until_up
from bench.run import ROOT, free_port
from bench.scale import environment
from bench.soak import rss_mb
from bench.synthetic import synthetic_almanac

BAR_MB = 100.0
BAR_RATIO = 2.0
CSVS_DOWNLOADED = 200


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmarks", type=int, default=10_000)
    parser.add_argument("--make-in", type=Path, help=argparse.SUPPRESS)  # the child's part
    args = parser.parse_args()
    if args.make_in is not None:
        print(json.dumps(asyncio.run(_make_measured(args.make_in))))
        return
    figures = measure_release(args.benchmarks)
    for name, value in figures.items():
        print(f"  {name:26} {value}")


def measure_release(benchmarks: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="almanac-release-") as scratch:
        data_dir = Path(scratch) / "data"
        file = Path(scratch) / "synthetic.json"
        with file.open("w") as out:
            json.dump(synthetic_almanac(benchmarks), out)
        began = time.monotonic()
        subprocess.run(
            [sys.executable, "-m", "server.cli", "import", str(file), "--by", "bench"],
            cwd=ROOT,
            env=environment(data_dir),
            check=True,
            capture_output=True,
        )
        imported = time.monotonic() - began
        file.unlink()
        made = json.loads(
            subprocess.run(
                [sys.executable, "-m", "bench.release", "--make-in", str(data_dir)],
                cwd=ROOT,
                env=environment(data_dir),
                check=True,
                capture_output=True,
                text=True,
            ).stdout
        )
        downloaded = _download(data_dir, made["id"])
    ratio = made["release_seconds"] / made["export_seconds"]
    return {
        "benchmarks": benchmarks,
        "import_seconds": round(imported, 1),
        **{name: value for name, value in made.items() if name != "id"},
        "release_vs_export": round(ratio, 2),
        **downloaded,
        "within_bars": made["making_growth_mb"] <= BAR_MB
        and downloaded["download_growth_mb"] <= BAR_MB
        and ratio <= BAR_RATIO,
    }


async def _make_measured(data_dir: Path) -> dict[str, Any]:
    """In one process (the server's code path for both): the export written as `almanac export`
    writes it, timed; then the release made, timed, its RSS sampled every 10 ms from just
    before (after the export: what reading everything once leaves in memory is not counted)."""
    from editing import write_export  # the child's imports only
    from schema import create_release
    from store import connect

    store = connect(None, "almanac", data_dir)
    try:
        began = time.monotonic()
        with (data_dir.parent / "almanac.ndjson").open("w", encoding="utf-8") as out:
            await write_export(store, out, ndjson=True)
        exported = time.monotonic() - began
        before = peak = rss_mb_self()
        done = threading.Event()

        def sample() -> None:
            nonlocal peak
            while not done.is_set():
                peak = max(peak, rss_mb_self())
                time.sleep(0.01)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        began = time.monotonic()
        try:
            stored, _ = await create_release(store, "Bench")
        finally:
            done.set()
            sampler.join()
        seconds = time.monotonic() - began
    finally:
        await store.close()
    [ndjson] = [file for file in stored.release.files if file.name == "almanac.ndjson"]
    return {
        "id": stored.release.id,
        "export_seconds": round(exported, 1),
        "release_seconds": round(seconds, 1),
        "making_rss_before_mb": round(before, 1),
        "making_growth_mb": round(peak - before, 1),
        "files": len(stored.release.files) + 1,
        "ndjson_bytes": ndjson.size,
    }


def rss_mb_self() -> float:
    return rss_mb(os.getpid())


def _download(data_dir: Path, release_id: str) -> dict[str, Any]:
    """The server's RSS idle and at its peak while the release is downloaded."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "server.cli", "serve", "--port", str(port)],
        cwd=ROOT,
        env=environment(data_dir, ALMANAC_LOG_LEVEL="warning"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}/releases/{release_id}"
        wait_until_up(f"http://127.0.0.1:{port}")
        with httpx.Client(timeout=600) as http:
            manifest = http.get(f"{url}/manifest.json").json()
            time.sleep(1)
            idle = peak = rss_mb(server.pid)
            done = threading.Event()

            def sample() -> None:
                nonlocal peak
                while not done.is_set():
                    peak = max(peak, rss_mb(server.pid))
                    time.sleep(0.01)

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            began, received = time.monotonic(), 0
            csvs = [f["name"] for f in manifest["files"] if f["name"].endswith(".csv")]
            try:
                for name in ["almanac.ndjson", "manifest.json", *csvs[:CSVS_DOWNLOADED]]:
                    with http.stream("GET", f"{url}/{name}") as response:
                        response.raise_for_status()
                        for chunk in response.iter_bytes():
                            received += len(chunk)
            finally:
                done.set()
                sampler.join()
            seconds = time.monotonic() - began
    finally:
        server.terminate()
        server.wait()
    return {
        "download_seconds": round(seconds, 1),
        "downloaded_bytes": received,
        "server_idle_rss_mb": round(idle, 1),
        "download_growth_mb": round(peak - idle, 1),
    }


if __name__ == "__main__":
    main()
