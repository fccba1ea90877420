"""`almanac import` of a tool's files and `almanac export --format eee`, each run as a command in
a process of its own: what it prints (the rows made, each leader change), the one line a bad
file gets, and that a missing Inspect is named."""

import json
import subprocess
import sys
from pathlib import Path

from interchange import record_problem
from tests.interchange.conftest import BENCHMARKS, LM_EVAL, MMLU_PRO, ROOT
from tests.server.cli.test_cli_import import almanac, refusal

MODEL = "RylanSchaeffer/mem_Qwen3-93M_minerva_math_rep_0_sbst_1.0000_epch_1_ot_1"


def with_benchmarks(data_dir: Path, tmp_path: Path) -> None:
    definitions = tmp_path / "benchmarks.json"
    definitions.write_text(json.dumps(BENCHMARKS))
    done = almanac(data_dir, "import", str(definitions))
    assert done.returncode == 0, done.stderr


def test_an_lm_eval_file_a_dry_run_then_the_import(data_dir: Path, tmp_path: Path) -> None:
    with_benchmarks(data_dir, tmp_path)
    dry = almanac(data_dir, "import", "--dry-run", str(LM_EVAL))
    assert dry.returncode == 0, dry.stderr
    assert f"added   math-rephrased-full: {MODEL} (0-shot) 0.04" in dry.stdout
    assert (
        f"leaders  math-rephrased-full: +1 -0 ~0 rows; leader none → {MODEL} (0.04)" in dry.stdout
    )
    assert "Would import (dry run, nothing written)" in dry.stdout
    done = almanac(data_dir, "import", str(LM_EVAL))
    assert done.returncode == 0, done.stderr
    assert f"added   math-perturbed-full: {MODEL} (0-shot) 0" in done.stdout
    assert "Imported: 2 benchmarks, 1 site record: 0 created, 3 updated" in done.stdout
    again = almanac(data_dir, "import", str(LM_EVAL))
    assert "added" not in again.stdout  # already there: nothing to add


def test_an_inspect_log_and_a_mapped_record(
    data_dir: Path, tmp_path: Path, inspect_log: Path
) -> None:
    with_benchmarks(data_dir, tmp_path)
    done = almanac(data_dir, "import", str(inspect_log))
    assert done.returncode == 0, done.stderr
    assert "added   arithmetic: mockllm/model 66.6667" in done.stdout
    mapping = tmp_path / "map.csv"
    mapping.write_text(
        "MMLU-Pro (overall),mmlu-pro\n"
        + "".join(
            f"MMLU-Pro ({subject}),-\n"
            for subject in (
                "Biology",
                "Business",
                "Chemistry",
                "Computer Science",
                "Economics",
                "Engineering",
                "Health",
                "History",
                "Law",
                "Math",
                "Philosophy",
                "Physics",
                "Psychology",
                "Other",
            )
        )
    )
    done = almanac(
        data_dir, "import", "--map", str(mapping), "--reported-by", "THIRD_PARTY", str(MMLU_PRO)
    )
    assert done.returncode == 0, done.stderr
    assert "added   mmlu-pro: Yi-1.5-34B-Chat 52.29" in done.stdout


def test_a_bad_file_is_one_line_and_nothing_is_written(data_dir: Path, tmp_path: Path) -> None:
    with_benchmarks(data_dir, tmp_path)
    cut = tmp_path / LM_EVAL.name
    cut.write_text(LM_EVAL.read_text()[:5000])
    said = refusal(almanac(data_dir, "import", "--format", "lm-eval", str(cut)))
    assert said.startswith(f"Error: {cut}, line 139, column 22: not valid JSON: Unterminated")
    # Its format cannot be told from what is left: the almanac's own reader says what is wrong.
    said = refusal(almanac(data_dir, "import", str(cut)))
    assert said.startswith(f"Error: {cut} cannot be imported: file: not valid JSON (line 139")
    unknown = refusal(almanac(data_dir, "import", "--benchmark", "no-such-one", str(LM_EVAL)))
    assert unknown == "Error: --benchmark: no benchmark has the slug 'no-such-one'"
    exported = tmp_path / "out"
    assert almanac(data_dir, "export", "--format", "eee", str(exported)).returncode == 0
    assert MODEL not in (exported / "almanac.eee.jsonl").read_text()


def test_the_export_in_every_eval_ever_records(data_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "eee"
    done = almanac(data_dir, "export", "--format", "eee", str(folder))
    assert done.returncode == 0, done.stderr
    lines = (folder / "almanac.eee.jsonl").read_text().splitlines()
    assert (
        done.stdout.strip()
        == f"Exported {len(lines)} Every Eval Ever records to {folder / 'almanac.eee.jsonl'}."
    )
    assert all(record_problem(json.loads(line)) is None for line in lines)


def test_without_inspect_the_command_says_how_to_install_it(
    inspect_log: Path, data_dir: Path
) -> None:
    # Inspect made unimportable in the command's process, as on an install without the extra.
    script = "import sys; sys.modules['inspect_ai'] = None; from server.cli import main; main()"
    done = subprocess.run(
        [sys.executable, "-c", script, "import", str(inspect_log)],
        cwd=ROOT,
        env={"ALMANAC_DATA_DIR": str(data_dir), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert refusal(done) == (
        f"Error: {inspect_log}: reading Inspect logs needs Inspect: pip install '.[inspect]'"
    )
