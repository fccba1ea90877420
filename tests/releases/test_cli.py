"""`almanac release` in a process of its own, on a data directory of its own: made, made again
(the same id), listed, deleted to a tombstone; each refusal one line and exit code 1. Two data
directories seeded alike release the same id."""

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ID_SHAPE = r"^\d{4}-\d{2}-\d{2}-[0-9a-f]{12}$"


def almanac(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("ALMANAC_")}
    environment["ALMANAC_DATA_DIR"] = str(data_dir)
    return subprocess.run(
        [sys.executable, "-m", "server.cli", *args],
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture
def directory(tmp_path: Path) -> Path:
    return tmp_path / "data"


def test_a_release_is_made_listed_and_deleted(directory: Path) -> None:
    made = almanac(directory, "release", "create", "--title", "December 2026")
    assert made.returncode == 0, made.stderr
    release_id = made.stdout.strip()
    assert "Released: 11 benchmarks, 8 models, 57 leaderboard rows in 14 files" in made.stderr
    folder = directory / "releases" / release_id
    manifest = (folder / "manifest.json").read_bytes()
    assert release_id.endswith(hashlib.sha256(manifest).hexdigest()[:12])
    for file in json.loads(manifest)["files"]:
        data = (folder / file["name"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == file["sha256"]
    again = almanac(directory, "release", "create", "--title", "Another title")
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == release_id
    assert "released already, as 'December 2026'" in again.stderr
    listed = almanac(directory, "release", "list")
    [line] = listed.stdout.splitlines()
    assert line.split("\t")[::2] == [release_id, "December 2026"]
    deleted = almanac(directory, "release", "delete", release_id, "--why", "a misread score")
    assert deleted.returncode == 0, deleted.stderr
    assert not (folder / "almanac.ndjson").exists()
    listed = almanac(directory, "release", "list")
    [line] = listed.stdout.splitlines()
    shown, _, title, gone = line.split("\t")
    assert (shown, title) == (release_id, "December 2026")
    assert gone.startswith("deleted ")
    assert gone.endswith(": a misread score")


def test_refusals_are_one_line(directory: Path) -> None:
    for args, said in [
        (("create", "--title", " "), "Error: A release needs a title."),
        (("delete", "2026-01-01-000000000000", "--why", "x"), "Error: There is no release"),
        (("delete", "../../etc", "--why", "x"), "Error: There is no release"),
    ]:
        result = almanac(directory, "release", *args)
        assert result.returncode == 1, result.stderr
        [line] = [line for line in result.stderr.splitlines() if not line.startswith("Loaded")]
        assert line.startswith(said)


def test_two_data_directories_release_the_same_id(tmp_path: Path) -> None:
    ours = almanac(tmp_path / "ours", "release", "create", "--title", "Ours")
    theirs = almanac(tmp_path / "theirs", "release", "create", "--title", "Theirs")
    assert ours.returncode == theirs.returncode == 0
    assert ours.stdout == theirs.stdout
    assert re.match(ID_SHAPE, ours.stdout.strip())
