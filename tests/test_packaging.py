"""What ships: the image copies every package the wheel is built from."""

import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]


def test_the_image_copies_every_package_of_the_wheel() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    packages = project["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]
    copied = re.findall(r"^COPY (\S+) \1$", (ROOT / "Dockerfile").read_text(), re.M)
    assert set(packages) <= set(copied)


def test_nothing_committed_is_what_a_command_writes() -> None:
    """No tracked file is one .gitignore says the commands write (a download, a manifest, a
    backup left at the root)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    ignored = subprocess.run(
        ["git", "ls-files", "--cached", "--ignored", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert ignored == []
