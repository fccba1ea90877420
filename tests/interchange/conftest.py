"""The interchange tests' files: the published fixtures (fixtures/README.md says where each comes
from), Inspect logs written by running a task, and the benchmarks they are imported into."""

import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from editing import Stamp, import_dataset
from store import Store

FIXTURES = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).parents[2]
LM_EVAL = FIXTURES / "results_2026-01-21T03-44-18.458309.json"
MMLU_PRO = FIXTURES / "mmlu-pro-yi-1.5-34b-chat.eee.json"
GLOBAL_MMLU = FIXTURES / "global-mmlu-lite-gemma-3-4b-it.eee.json"


def percent_benchmark(slug: str, name: str, metric: str) -> dict[str, Any]:
    return {
        "slug": slug,
        "name": name,
        "metric": {"name": metric, "unit": "PERCENT", "higher_is_better": True},
        "category": "knowledge",
        "status": "IN_USE",
    }


# What the files say of their tasks: their names, and metrics that are 0-1 proportions.
BENCHMARKS = {
    "format": "benchmark-almanac/1",
    "categories": [{"slug": "knowledge", "name": "Knowledge"}],
    "benchmarks": [
        percent_benchmark("math-perturbed-full", "math_perturbed_full", "Exact match"),
        percent_benchmark("math-rephrased-full", "math_rephrased_full", "Exact match"),
        percent_benchmark("mmlu-pro", "MMLU-Pro (overall)", "Accuracy"),
        percent_benchmark("global-mmlu-lite-english", "Global MMLU Lite English", "Accuracy"),
        percent_benchmark("arithmetic", "arithmetic", "Accuracy"),
    ],
}


def stamp() -> Stamp:
    """Now: an Inspect log made by the tests is dated the day it is run."""
    return Stamp(by="test", at=datetime.now(UTC))


async def add_benchmarks(store: Store) -> None:
    summary = await import_dataset(store, BENCHMARKS, stamp())
    assert not summary.rejected, summary.rejected


def run_inspect_task(folder: Path, *, fail: bool = False) -> Path:
    """The log of a task run by Inspect on its offline mock model (tests/interchange/inspect_task)."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.interchange.inspect_task", str(folder)]
        + (["--fail"] if fail else []),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return Path(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def inspect_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run_inspect_task(tmp_path_factory.mktemp("inspect"))


@pytest.fixture(scope="session")
def failed_inspect_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run_inspect_task(tmp_path_factory.mktemp("inspect-failed"), fail=True)
