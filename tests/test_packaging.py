"""What ships: the image copies every package the wheel is built from."""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).parents[1]


def test_the_image_copies_every_package_of_the_wheel() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    packages = project["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]
    copied = re.findall(r"^COPY (\S+) \1$", (ROOT / "Dockerfile").read_text(), re.M)
    assert set(packages) <= set(copied)
