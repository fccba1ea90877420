"""`./dev bench` names what a bench needs and is missing, in one line, before it installs
anything."""

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.docs.guides import ROOT


def dev(*args: str, path: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ROOT / "dev"), *args],
        env={"PATH": path, "HOME": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_bench_run_by_wrk_says_it_needs_wrk(tmp_path: Path) -> None:
    # A PATH with bash and grep only: no wrk (and no Python, which the install would need).
    tools = tmp_path / "bin"
    tools.mkdir()
    for tool in ("bash", "grep", "dirname"):
        found = shutil.which(tool)
        if found is None:
            pytest.skip(f"{tool} is not installed")
        (tools / tool).symlink_to(found)
    refused = dev("bench", "run.py", path=str(tools))
    assert refused.returncode == 2
    assert refused.stderr == (
        "./dev bench: bench/run.py needs wrk, which is not installed "
        "(apt-get install wrk; brew install wrk)\n"
    )
    unknown = dev("bench", "no-such-bench", path=str(tools))
    assert unknown.returncode == 2
    assert "no bench/no-such-bench.py" in unknown.stderr
