"""A release of a SYNTHETIC almanac (bench/synthetic.py, 10,000 benchmarks by default): what
making it costs in time against `almanac export` of the same data, and in memory while it is
made and while it is downloaded.

The almanac is imported with `almanac import` into a new data directory. Then, in one process on
that store, timed, `--repeats` times in turn (on shared cores the machine's load moves between
runs: each release is compared with the export just before it): the export written as `almanac
export FILE.ndjson` writes it (`editing.write_export`), then the release made by
`schema.create_release` (what `almanac release create` and the createRelease mutation run),
while a thread samples the process's RSS every 10 ms from just before (after the export; the
export is sampled the same way, so that both carry the sampler's cost). The process that makes a
large release's records and leaderboards (releases/batch_files.py) is counted with it: its RSS
is added to each sample, and its CPU time to the release's. The release made is set aside before
the next (the same data would give the release made, at once): moved out of the data directory,
and deleted only once every turn is measured. Deleted between turns, its 10,000 files made the
next release's file creations slow: ext4 without a journal (this machine's disk) skips, at each
new inode, the inodes freed in the last minutes (`recently_deleted` in a kernel profile: 1 to 3
s of system time at 2,000 benchmarks), a cost of the bench's deletion, not of making a release.
For the same reason a run begins only once the files an earlier run deleted are six minutes old
(it says so, and waits). Then `almanac serve` serves the data directory: the server's RSS idle
(after one small download), and its peak while a client downloads the release's NDJSON, its
manifest and the first 200 leaderboards' CSVs, each read to its end.

Bars (issue 29): memory grows at most 100 MB while the release is made and while it is
downloaded; making it takes at most 2x the export's time.

    .venv/bin/python bench/release.py [--benchmarks 10000] [--repeats 3]
"""

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from resource import RUSAGE_CHILDREN, RUSAGE_SELF
from typing import Any

import httpx

from bench.run import ROOT, free_port, wait_until_up
from bench.scale import environment, timed_import
from bench.soak import rss_mb
from bench.synthetic import synthetic_almanac

BAR_MB = 100.0
BAR_RATIO = 2.0
CSVS_DOWNLOADED = 200
FREED_INODES_SKIPPED_SECONDS = 360
"""How long ext4 without a journal passes over a freed inode when it makes a file: 60 s, and
300 s more while the inode's table block is still dirty (fs/ext4/ialloc.c, `recently_deleted`)."""
DELETED_AT = Path(tempfile.gettempdir()) / "almanac-bench-release.deleted-at"
"""When a run last deleted the releases it made (beside any data directory: one disk)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmarks", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--data-dir",
        type=Path,
        help="a data directory the synthetic almanac of --benchmarks was imported into "
        "(`almanac import`) by an earlier run: the import is skipped; its releases are deleted",
    )
    parser.add_argument("--make-in", type=Path, help=argparse.SUPPRESS)  # the child's part
    args = parser.parse_args()
    if args.make_in is not None:
        print(json.dumps(asyncio.run(_make_measured(args.make_in, args.repeats))))
        return
    figures = measure_release(args.benchmarks, args.repeats, args.data_dir)
    for name, value in figures.items():
        print(f"  {name:26} {value}")


def measure_release(
    benchmarks: int, repeats: int = 3, imported_in: Path | None = None
) -> dict[str, Any]:
    _wait_for_freed_inodes()
    with tempfile.TemporaryDirectory(prefix="almanac-release-") as scratch:
        data_dir = imported_in or Path(scratch) / "data"
        imported = None if imported_in else _imported(benchmarks, data_dir, Path(scratch))
        made = json.loads(
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "bench.release",
                    "--make-in",
                    str(data_dir),
                    "--repeats",
                    str(repeats),
                ],
                cwd=ROOT,
                env=environment(data_dir),
                check=True,
                capture_output=True,
                text=True,
            ).stdout
        )
        downloaded = _download(data_dir, made["id"])
        shutil.rmtree(set_aside(data_dir), ignore_errors=True)
        DELETED_AT.write_text(str(time.time()))  # the scratch directory's data goes too
    ratio = made["release_vs_export"]
    return {
        "benchmarks": benchmarks,
        "import_seconds": imported,
        **{name: value for name, value in made.items() if name != "id"},
        **downloaded,
        "within_bars": made["making_growth_mb"] <= BAR_MB
        and downloaded["download_growth_mb"] <= BAR_MB
        and ratio <= BAR_RATIO,
    }


def _wait_for_freed_inodes() -> None:
    """Until the files the last run deleted no longer slow the making of new ones."""
    if not DELETED_AT.exists():
        return
    wait = float(DELETED_AT.read_text()) + FREED_INODES_SKIPPED_SECONDS - time.time()
    if wait > 0:
        print(f"waiting {wait:.0f} s: the last run's deleted files are recent", file=sys.stderr)
        time.sleep(wait)


def _imported(benchmarks: int, data_dir: Path, scratch: Path) -> float:
    """The synthetic almanac imported into `data_dir` by `almanac import`: the seconds taken."""
    file = scratch / "synthetic.json"
    with file.open("w") as out:
        json.dump(synthetic_almanac(benchmarks), out)
    seconds = timed_import(file, data_dir)
    file.unlink()
    return round(seconds, 1)


async def _make_measured(data_dir: Path, repeats: int) -> dict[str, Any]:
    """In one process (the server's code path for both), `repeats` times: the export written
    as `almanac export` writes it, timed; then the release made, timed, its RSS sampled every
    10 ms from just before (after the export: what reading everything once leaves in memory is
    not counted; the export sampled too, so that both carry the sampler). The release/export
    ratio is the median of the turns'; the same of their CPU time beside it."""
    from editing import write_export  # the child's imports only
    from schema import create_release
    from store import connect

    store = connect(None, "almanac", data_dir)
    exports, releases, growths, before, children_peak = [], [], [], 0.0, 0.0
    export_cpu, release_cpu = [], []
    try:
        for _ in range(repeats):
            _set_aside(data_dir)
            # Sampled as the release is, so that both carry the sampler's cost (a thread taking
            # the GIL every 10 ms).
            with _PeakRss(rss_mb_self()):
                began, cpu = time.monotonic(), cpu_seconds()
                with (data_dir.parent / "almanac.ndjson").open("w", encoding="utf-8") as out:
                    await write_export(store, out, ndjson=True)
                exports.append(time.monotonic() - began)
                export_cpu.append(cpu_seconds() - cpu)
            before = rss_mb_self()
            with _PeakRss(before) as peak:
                began, cpu = time.monotonic(), cpu_seconds()
                stored, made = await create_release(store, "Bench")
                releases.append(time.monotonic() - began)
                release_cpu.append(cpu_seconds() - cpu)
            assert made, "the release was made before: it was not removed"
            growths.append(peak.mb - before)
            children_peak = max(children_peak, peak.children_mb)
    finally:
        await store.close()
    [ndjson] = [file for file in stored.release.files if file.name == "almanac.ndjson"]
    ratios = [release / export for export, release in zip(exports, releases, strict=True)]
    cpu_ratios = [r / e for e, r in zip(export_cpu, release_cpu, strict=True)]
    return {
        "id": stored.release.id,
        "export_seconds": [round(seconds, 1) for seconds in exports],
        "release_seconds": [round(seconds, 1) for seconds in releases],
        "release_vs_export_each": [round(ratio, 2) for ratio in ratios],
        "release_vs_export": round(statistics.median(ratios), 2),
        "export_cpu_seconds": [round(seconds, 1) for seconds in export_cpu],
        "release_cpu_seconds": [round(seconds, 1) for seconds in release_cpu],
        "cpu_release_vs_export_each": [round(ratio, 2) for ratio in cpu_ratios],
        "cpu_release_vs_export": round(statistics.median(cpu_ratios), 2),
        "making_rss_before_mb": round(before, 1),
        "making_growth_mb": round(max(growths), 1),
        "making_children_peak_mb": round(children_peak, 1),
        "files": len(stored.release.files) + 1,
        "ndjson_bytes": ndjson.size,
        "eee_bytes": sum(file.size for file in stored.release.files if file.name.endswith("jsonl")),
    }


def set_aside(data_dir: Path) -> Path:
    """Where the releases made by the turns go (beside the data directory: the same disk)."""
    return data_dir.with_name(data_dir.name + ".releases-set-aside")


def _set_aside(data_dir: Path) -> None:
    """The embedded store's releases moved out of the data directory, not deleted (see the
    module's docstring): renamed, a step that frees no inode."""
    releases = data_dir / "releases"
    if releases.exists():
        aside = set_aside(data_dir)
        aside.mkdir(exist_ok=True)
        releases.rename(aside / f"{len(list(aside.iterdir())) + 1}")


class _PeakRss:
    """The peak RSS of the process and its children (the process that makes a large release's
    leaderboards), sampled every 10 ms by a thread while in the block; the children are looked
    for every half second (a child starts as an interpreter, some 50 MB once it has imported)."""

    def __init__(self, start: float) -> None:
        self.mb = start
        self.children_mb = 0.0
        self.done = threading.Event()
        self.sampler = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        children: list[int] = []
        for sample in itertools.count():
            if self.done.is_set():
                return
            if sample % 50 == 0:
                children = _children()
            in_children = sum(map(_rss_mb_if_running, children))
            self.mb = max(self.mb, rss_mb_self() + in_children)
            self.children_mb = max(self.children_mb, in_children)
            time.sleep(0.01)

    def __enter__(self) -> "_PeakRss":
        self.sampler.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.done.set()
        self.sampler.join()


def _children() -> list[int]:
    """The process's children (from each process's parent in /proc: this kernel lists no
    children)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == os.getpid():
                found.append(int(stat.parent.name))
    return found


def _rss_mb_if_running(pid: int) -> float:
    try:
        return rss_mb(pid)
    except (OSError, RuntimeError):  # ended
        return 0.0


def cpu_seconds() -> float:
    """The process's CPU time so far, user and system, its threads' and its ended children's
    included: the machine's load stretches it less than the clock (both steps' include the RSS
    sampler's reads)."""
    own, children = (resource.getrusage(who) for who in (RUSAGE_SELF, RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


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
