"""Results in: an lm-eval results file, an Inspect log written by running a task, and Every Eval
Ever records imported on each store; every stored row, its uncertainty, reporter and provenance
checked. A dry run writes nothing; the same file again changes nothing."""

import hashlib
from pathlib import Path
from typing import Any

from inspect_ai.log import read_eval_log

from interchange import ImportOptions, ImportReport, import_tool_files, read_files
from store import Store
from tests.conftest import snapshot
from tests.interchange.conftest import (
    GLOBAL_MMLU,
    LM_EVAL,
    MMLU_PRO,
    add_benchmarks,
    stamp,
)

LM_EVAL_MODEL = "RylanSchaeffer/mem_Qwen3-93M_minerva_math_rep_0_sbst_1.0000_epch_1_ot_1"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


async def rows(store: Store, slug: str) -> list[dict[str, Any]]:
    [doc] = await store.benchmarks_by_slugs([slug])
    return [{k: v for k, v in entry.items() if k != "model_key"} for entry in doc["entries"]]


async def imported(
    store: Store, path: Path, *, dry_run: bool = False, **options: Any
) -> ImportReport:
    files = read_files([path], options.pop("format", None))
    return await import_tool_files(store, files, ImportOptions(**options), stamp(), dry_run=dry_run)


def leave_out_all_but(tmp_path: Path, path: Path, kept: dict[str, str]) -> Path:
    """A --map file: the names in `kept` to their benchmarks, every other name left out."""
    [file] = read_files([path], None)
    names = dict.fromkeys(result.task for result in file.results)
    mapping = tmp_path / "map.csv"
    mapping.write_text(
        "name,benchmark\n" + "".join(f'"{name}",{kept.get(name, "-")}\n' for name in names)
    )
    return mapping


async def test_an_lm_eval_results_file(store: Store) -> None:
    await add_benchmarks(store)
    report = await imported(store, LM_EVAL)
    assert report.written
    source = f"lm-evaluation-harness 0.4.9.2: {LM_EVAL.name} (sha256 {sha256(LM_EVAL)})"
    row = {
        "model_name": LM_EVAL_MODEL,
        "setting": "0-shot",
        "source": source,
        "published_on": "2026-01-21",
        "note": None,
        "sample_size": 5000,
    }
    # exact_match 0.0004 with its stderr 0.000282814..., on 5000 items: in percent.
    assert await rows(store, "math-rephrased-full") == [
        {**row, "score": 0.04, "standard_error": 0.028281442113}
    ]
    assert await rows(store, "math-perturbed-full") == [
        {**row, "score": 0.0, "standard_error": 0.0}
    ]
    provenance = await store.provenance()
    assert provenance[-1] == (
        f"Imported on {stamp().at.date()}: 2 scores from {source} into math-perturbed-full, "
        "math-rephrased-full."
    )
    assert [change.describe() for change in report.rows] == [
        f"added   math-perturbed-full: {LM_EVAL_MODEL} (0-shot) 0",
        f"added   math-rephrased-full: {LM_EVAL_MODEL} (0-shot) 0.04",
    ]


async def test_an_inspect_log_of_a_run(store: Store, inspect_log: Path) -> None:
    await add_benchmarks(store)
    report = await imported(store, inspect_log)
    assert report.written
    header = read_eval_log(str(inspect_log), header_only=True)
    version = header.eval.packages["inspect_ai"]
    # match() scored 2 of 3 answers right: accuracy 2/3, stderr 1/3, in percent.
    assert await rows(store, "arithmetic") == [
        {
            "model_name": "mockllm/model",
            "setting": None,
            "score": 66.6666666667,
            "source": f"Inspect {version}: {inspect_log.name} (sha256 {sha256(inspect_log)})",
            "published_on": header.eval.created[:10],
            "note": None,
            "standard_error": 33.3333333333,
            "sample_size": 3,
        }
    ]


async def test_an_every_eval_ever_record_mapped(store: Store, tmp_path: Path) -> None:
    await add_benchmarks(store)
    # The record's overall score matches the benchmark by its name; its 14 subjects are left out.
    mapping = leave_out_all_but(tmp_path, MMLU_PRO, {"MMLU-Pro (overall)": "mmlu-pro"})
    report = await imported(store, MMLU_PRO, map_file=mapping)
    assert [change.describe() for change in report.rows] == [
        "added   mmlu-pro: Yi-1.5-34B-Chat 52.29"
    ]
    provenance = f"Every Eval Ever 0.2.2: {MMLU_PRO.name} (sha256 {sha256(MMLU_PRO)})"
    assert await rows(store, "mmlu-pro") == [
        {
            "model_name": "Yi-1.5-34B-Chat",
            "setting": None,
            "score": 52.29,
            "source": f"MMLU-Pro Leaderboard, via {provenance}",
            "published_on": None,
            "note": None,
            "reported_by": "THIRD_PARTY",
        }
    ]


async def test_a_published_interval_and_who_reported(store: Store, tmp_path: Path) -> None:
    await add_benchmarks(store)
    mapping = leave_out_all_but(tmp_path, GLOBAL_MMLU, {"English": "global-mmlu-lite-english"})
    await imported(store, GLOBAL_MMLU, map_file=mapping, reported_by="BENCHMARK_MAINTAINER")
    provenance = f"Every Eval Ever 0.2.0: {GLOBAL_MMLU.name} (sha256 {sha256(GLOBAL_MMLU)})"
    # Published as 0.67 with a confidence interval of -0.0461 to 0.0461 about it.
    assert await rows(store, "global-mmlu-lite-english") == [
        {
            "model_name": "gemma-3-4b-it",
            "setting": None,
            "score": 67.0,
            "source": f"Global MMLU Lite, via {provenance}",
            "published_on": None,  # the record says when it was retrieved, not when run
            "note": None,
            "interval": {"low": 62.39, "high": 71.61, "level": 0.95},
            "reported_by": "BENCHMARK_MAINTAINER",
        }
    ]


async def test_a_dry_run_says_what_would_change_and_writes_nothing(store: Store) -> None:
    await add_benchmarks(store)
    before = await snapshot(store)
    report = await imported(store, LM_EVAL, dry_run=True)
    assert not report.written
    assert [change.change for change in report.rows] == ["added", "added"]
    changes = [outcome.changes for outcome in report.summary.outcomes if outcome.changes]
    assert changes == [
        f"+1 -0 ~0 rows; leader none → {LM_EVAL_MODEL} (0); tracked leader none",
        f"+1 -0 ~0 rows; leader none → {LM_EVAL_MODEL} (0.04); tracked leader none",
    ]
    assert await snapshot(store) == before


async def test_the_same_file_again_changes_no_row(store: Store) -> None:
    await add_benchmarks(store)
    await imported(store, LM_EVAL)
    first = await rows(store, "math-rephrased-full")
    again = await imported(store, LM_EVAL)
    assert again.rows == []
    assert await rows(store, "math-rephrased-full") == first
