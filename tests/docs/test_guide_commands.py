"""Every shell block of the README and the editor and operator guides runs, as a reader would
run it after the README's setup: in a folder of its own (what it writes stays there), with
`almanac` on the PATH (`source .venv/bin/activate`), the embedded store in a data directory of
its own, and `./dev serve`'s address (http://127.0.0.1:8000) pointing at a live server. A
block that cannot run here is marked with why (`<!-- not run: ... -->`); docs/partners.md's
examples run in test_partners_guide."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.guides import GUIDES, ROOT, SHELL, Block, blocks

DEV_SERVER = "http://127.0.0.1:8000"
VENV = Path(sys.executable).parents[1]
COMMANDS = [
    block
    for guide in GUIDES
    if guide.name != "partners.md"
    for block in blocks(guide)
    if block.info in SHELL and block.not_run is None
]


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data directory the CLI seeded, for each command to have a copy of."""
    folder = tmp_path_factory.mktemp("seeded")
    environment = {k: v for k, v in os.environ.items() if not k.startswith("ALMANAC_")}
    done = run("almanac seed", {**environment, **reader_paths(folder / "data")}, folder)
    assert done.returncode == 0, done.stderr
    return folder / "data"


def reader_paths(data_dir: Path) -> dict[str, str]:
    return {
        "PATH": f"{VENV / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "ALMANAC_DATA_DIR": str(data_dir),
    }


def reader_environment(live_server: dict[str, str], seeded: Path, folder: Path) -> dict[str, str]:
    (folder / ".venv").symlink_to(VENV)
    (folder / "contract").symlink_to(ROOT / "contract")
    shutil.copytree(seeded, folder / "data")
    environment = {k: v for k, v in os.environ.items() if not k.startswith("ALMANAC_")}
    return {**environment, **live_server, **reader_paths(folder / "data")}


def run(code: str, environment: dict[str, str], folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", code],
        env=environment,
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize("block", COMMANDS, ids=[block.name for block in COMMANDS])
def test_command_runs(
    live_server: dict[str, str], seeded: Path, block: Block, tmp_path: Path
) -> None:
    if shutil.which("curl") is None and "curl" in block.code:
        pytest.skip("curl is not installed")
    environment = reader_environment(live_server, seeded, tmp_path)
    result = run(
        block.code.replace(DEV_SERVER, live_server["BENCHMARK_ALMANAC_URL"]), environment, tmp_path
    )
    assert result.returncode == 0, f"{block.name}\n{result.stdout}\n{result.stderr}"
