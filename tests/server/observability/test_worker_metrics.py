"""The metrics directory of several workers: made afresh, found by the workers through the
environment, and gone (the variable too) when they end."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from server.observability.worker_metrics import MULTIPROC_DIR, ended_workers, shared_by_workers


def test_a_fresh_directory_is_made_for_the_workers_then_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.delenv(MULTIPROC_DIR, raising=False)
    monkeypatch.setattr("tempfile.tempdir", None)  # TMPDIR is read again
    with shared_by_workers() as directory:
        assert os.environ[MULTIPROC_DIR] == str(directory)
        assert directory.parent == tmp_path
        assert list(directory.iterdir()) == []
        (directory / "counter_1.db").write_bytes(b"written by a worker")
    assert not directory.exists()
    assert MULTIPROC_DIR not in os.environ


def test_a_directory_already_set_says_where(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(MULTIPROC_DIR, str(tmp_path))
    (tmp_path / "counter_1.db").write_bytes(b"an earlier run's")
    with shared_by_workers() as directory:
        assert directory.parent == tmp_path
        assert list(directory.iterdir()) == []
    assert os.environ[MULTIPROC_DIR] == str(tmp_path)
    assert [path.name for path in tmp_path.iterdir()] == ["counter_1.db"]


def test_the_workers_that_ended_are_those_whose_live_gauges_stay(tmp_path: Path) -> None:
    ended = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    gone = int(ended.stdout)
    for name in (
        f"gauge_livesum_{gone}.db",
        f"counter_{gone}.db",  # what it counted still counts: not a live gauge
        f"gauge_liveall_{os.getpid()}.db",
        f"gauge_all_{gone}.db",
    ):
        (tmp_path / name).write_bytes(b"")
    assert ended_workers(tmp_path) == {gone}
