"""An Inspect `.eval` archive that unpacks to far more than it weighs (a zip bomb) is refused
before Inspect's reader, which decompresses a member whole, opens it."""

import zipfile
from pathlib import Path

import pytest

from interchange import FileRefused, read_files
from interchange.archive_limits import MAX_UNPACKED_BYTES, unpacks_within


def bomb(path: Path, size: int, method: int = zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(path, "w", method) as archive, archive.open("header.json", "w") as out:
        out.write(b'{"version": 2, "status": "success", "eval": ')
        for _ in range(size // 2**20):
            out.write(b" " * 2**20)
        out.write(b"{}}")
    return path


def test_an_archive_unpacking_past_the_limit_is_refused(tmp_path: Path) -> None:
    path = bomb(tmp_path / "bomb.eval", MAX_UNPACKED_BYTES + 2**20)
    assert path.stat().st_size < MAX_UNPACKED_BYTES // 100
    with pytest.raises(FileRefused, match=f"unpacks to more than {MAX_UNPACKED_BYTES} bytes"):
        read_files([path], None)


def test_a_log_within_the_limit_is_measured_whole(inspect_log: Path) -> None:
    assert unpacks_within(inspect_log)
    assert not unpacks_within(inspect_log, limit=10)


def test_a_stored_member_counts_as_its_size(tmp_path: Path) -> None:
    path = bomb(tmp_path / "stored.eval", 3 * 2**20, zipfile.ZIP_STORED)
    assert unpacks_within(path, limit=3 * 2**20 + 100)
    assert not unpacks_within(path, limit=3 * 2**20)
