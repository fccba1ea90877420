"""The directory where several worker processes keep their metrics (prometheus-client's
multiprocess mode), made afresh by `almanac serve --workers N` and removed when it ends.

Each worker writes its counters, histograms and gauges to files there, and whichever answers
`/metrics` (or the serving command itself, on `ALMANAC_METRICS_PORT`) reads them all. The
variable is set before the workers start: prometheus-client reads it when a worker first
imports it. A worker that ended leaves its counters' files (what it counted still counts);
its live gauges' files are removed (`mark_process_dead`), or they would stand for a process
that is gone.
"""

import os
import re
import shutil
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from prometheus_client import multiprocess

MULTIPROC_DIR = "PROMETHEUS_MULTIPROC_DIR"
PREFIX = "almanac-metrics-"
REAP_SECONDS = 1.0
"""How often the files of workers that ended are looked for."""
LIVE_GAUGE_FILE = re.compile(r"gauge_live[a-z]+_(\d+)\.db")


@contextmanager
def shared_by_workers() -> Iterator[Path]:
    """A fresh metrics directory for the workers started in the block, and removed after it.
    A PROMETHEUS_MULTIPROC_DIR already set says where: the directory is made inside it."""
    given = os.environ.get(MULTIPROC_DIR)
    directory = Path(tempfile.mkdtemp(prefix=PREFIX, dir=given))
    os.environ[MULTIPROC_DIR] = str(directory)
    stop = threading.Event()
    reaper = threading.Thread(
        target=reap, args=(directory, stop), name="almanac-metrics-reaper", daemon=True
    )
    reaper.start()
    try:
        yield directory
    finally:
        stop.set()
        reaper.join()
        shutil.rmtree(directory, ignore_errors=True)
        if given is None:
            del os.environ[MULTIPROC_DIR]
        else:
            os.environ[MULTIPROC_DIR] = given


def reap(directory: Path, stop: threading.Event) -> None:
    """Every second until `stop`, the live gauges of the workers that ended taken away (Uvicorn
    replaces a worker that dies; SIGTTOU retires one)."""
    while not stop.wait(REAP_SECONDS):
        for pid in ended_workers(directory):
            multiprocess.mark_process_dead(pid, str(directory))  # type: ignore[no-untyped-call]


def ended_workers(directory: Path) -> set[int]:
    """The processes that wrote live gauges in `directory` and are gone."""
    pids = {
        int(found[1])
        for path in directory.iterdir()
        if (found := LIVE_GAUGE_FILE.fullmatch(path.name)) is not None
    }
    return {pid for pid in pids if not running(pid)}


def running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # the number is another user's process now: not a worker of ours
        return False
    return True


def metrics_shared() -> bool:
    """Whether this process is in multiprocess mode (one of several workers, or the command
    that runs them)."""
    return MULTIPROC_DIR in os.environ
