"""`almanac import`, run as a command in a process of its own: what it says of a file it cannot
import (one line naming the file, and the line at fault; nothing half-written), and NDJSON read
a line at a time."""

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from bench.synthetic import synthetic_almanac
from editing.dataset import dataset_lines
from store.seed import load_bundled_dataset

ROOT = Path(__file__).parents[3]
GENERAL = "code-interpreter-benchmark-general"
HARD = "code-interpreter-benchmark-visualization-hard"


def almanac(
    data_dir: Path, *args: str, file_limit: int | None = None
) -> subprocess.CompletedProcess[str]:
    """`almanac ARGS` on the embedded store in `data_dir`; with `file_limit`, no file it
    writes may grow beyond that many bytes (as on a full disk)."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("ALMANAC_")}
    environment["ALMANAC_DATA_DIR"] = str(data_dir)

    def limited() -> None:
        if file_limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_limit, file_limit))

    return subprocess.run(
        [sys.executable, "-m", "server.cli", *args],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=limited,
    )


def refusal(result: subprocess.CompletedProcess[str]) -> str:
    """The one line a refused import says (on stderr), checked to be the only one."""
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("name", "content", "said"),
    [
        ("latin1.json", '{"format": "benchmark-almanac/1",\n"labs": [\n"Z\xfcrich"]}', "line 3"),
        ("latin1.csv", "benchmark,read_on,model_name,score\nx,2026-01-01,M\xfcller,1\n", "line 2"),
        (
            "latin1.ndjson",
            '{"format": "benchmark-almanac/1"}\n{"labs": [{"slug": "z", "name": "Z\xfcrich"}]}\n',
            "line[2]: not UTF-8 text",
        ),
    ],
)
def test_a_file_that_is_not_utf8_is_refused_in_one_line(
    tmp_path: Path, name: str, content: str, said: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content.encode("latin-1"))
    line = refusal(almanac(tmp_path / "data", "import", str(path)))
    assert str(path) in line
    assert "not UTF-8 text" in line
    assert said in line
    assert not (tmp_path / "data" / "almanac.sqlite3").exists()  # refused before the store


@pytest.mark.parametrize(
    ("name", "where"),
    [
        ("deep.json", "nests more than 100 levels deep (from line 1;"),
        ("deep.ndjson", "line[2]: nests more than 100 levels deep"),
    ],
)
def test_json_nested_100000_deep_is_refused_in_one_line(
    tmp_path: Path, name: str, where: str
) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    path = tmp_path / name
    if name.endswith(".ndjson"):
        path.write_text(f'{{"format": "benchmark-almanac/1"}}\n{{"labs": {deep}}}\n')
    else:
        path.write_text(f'{{"format": "benchmark-almanac/1", "labs": {deep}}}')
    said = refusal(almanac(tmp_path / "data", "import", str(path)))
    assert str(path) in said
    assert where in said


def test_a_full_disk_is_said_in_one_line_and_leaves_each_benchmark_whole(tmp_path: Path) -> None:
    data = tmp_path / "data"
    bundled = tmp_path / "bundled.json"
    bundled.write_text(json.dumps(load_bundled_dataset()), encoding="utf-8")
    assert almanac(data, "import", str(bundled)).returncode == 0
    synthetic = tmp_path / "synthetic.json"
    almanac_file = synthetic_almanac(40)
    synthetic.write_text(json.dumps(almanac_file), encoding="utf-8")
    largest = max(path.stat().st_size for path in data.iterdir())
    full = almanac(data, "import", str(synthetic), file_limit=largest + 200_000)
    said = refusal(full)
    assert str(synthetic) in said
    assert "the store could not write" in said
    # Nothing half-written: each benchmark is there with all its reads, or not at all.
    exported = tmp_path / "after.json"
    assert almanac(data, "export", str(exported)).returncode == 0
    stored = {b["slug"]: b for b in json.loads(exported.read_text(encoding="utf-8"))["benchmarks"]}
    made = [b for b in almanac_file["benchmarks"] if b["slug"] in stored]
    assert len(made) < len(almanac_file["benchmarks"])  # the disk filled part way
    assert all(len(stored[b["slug"]]["reads"]) == len(b["reads"]) for b in made)
    # With room again, the same import finishes the job.
    again = almanac(data, "import", str(synthetic))
    assert again.returncode == 0, again.stderr
    assert "0 rejected" in again.stdout


def test_an_ndjson_import_names_the_line_of_each_rejected_item(tmp_path: Path) -> None:
    lines = [json.dumps(line) for line in dataset_lines(load_bundled_dataset())]
    lines.insert(3, json.dumps({"models": [{"slug": "Not A Slug", "name": "X"}]}))
    lines.append(json.dumps({"benchmarks": [{"slug": GENERAL, "reads": [{"read_on": "x"}]}]}))
    path = tmp_path / "almanac.ndjson"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = almanac(tmp_path / "data", "import", str(path))
    assert result.returncode == 1, result.stderr
    rejected = [line for line in result.stdout.splitlines() if line.startswith("rejected")]
    assert len(rejected) == 2, result.stdout
    assert rejected[0].startswith("rejected  models Not A Slug: line 4: slug:")
    assert rejected[1].startswith(f"rejected  benchmarks {GENERAL}: line {len(lines)}: reads[0]")
    assert "0 updated" in result.stdout  # the bundled items, each line of them taken (as new,
    assert "2 rejected." in result.stdout  # or unchanged where the data directory was seeded)


def test_a_csv_import_names_every_bad_row_by_its_line(tmp_path: Path) -> None:
    data = tmp_path / "data"
    bundled = tmp_path / "bundled.json"
    bundled.write_text(json.dumps(load_bundled_dataset()), encoding="utf-8")
    assert almanac(data, "import", str(bundled)).returncode == 0
    rows = tmp_path / "rows.csv"
    rows.write_text(
        "benchmark,read_on,model_name,score\n"
        f"{GENERAL},2026-11-20,Qwen-14B-Chat,lots\n"  # line 2
        f"{GENERAL},2026-11-20,New Model,10\n"
        f"{GENERAL},2026-11-21,Qwen-14B-Chat,1\n"  # line 4
        f"{GENERAL},2026-11-21,Other Model,many\n"  # line 5: a second read's bad row
        "code-interpreter-benchmark-math,1999-01-01,Qwen-14B-Chat,50\n"  # line 6: too early
        f"{HARD},2026-11-20,Qwen-14B-Chat,50\n"  # line 7
        f"{HARD},2026-11-20,Qwen-14B-Chat,51\n",  # line 8: repeats line 7
        encoding="utf-8",
    )
    result = almanac(data, "import", str(rows), "--allow-removals")
    assert result.returncode == 1
    said = {
        line.split()[2].rstrip(":"): line
        for line in result.stdout.splitlines()
        if line.startswith("rejected")
    }
    assert "line[2].score:" in said[GENERAL]
    assert "line[5].score:" in said[GENERAL]  # a second read's bad row: every one is said
    assert "line[6].read_on:" in said["code-interpreter-benchmark-math"]
    assert "line[8]: repeats line 7:" in said[HARD]
    assert not any("reads[" in line for line in said.values())


def test_a_csv_import_names_the_rule_errors_of_every_read_by_their_lines(tmp_path: Path) -> None:
    data = tmp_path / "data"
    bundled = tmp_path / "bundled.json"
    bundled.write_text(json.dumps(load_bundled_dataset()), encoding="utf-8")
    assert almanac(data, "import", str(bundled)).returncode == 0
    rows = tmp_path / "rows.csv"
    rows.write_text(
        "benchmark,read_on,model_name,score,interval_low,interval_high\n"
        f"{GENERAL},2026-11-20,Qwen-14B-Chat,150,,\n"  # line 2: over 100
        f"{GENERAL},2026-11-20,New Model,10,,\n"
        f"{GENERAL},2026-11-21,Qwen-14B-Chat,1,,\n"
        f"{GENERAL},2026-11-21,Other Model,-3,,\n"  # line 5: a second read's, under 0
        f"{GENERAL},2026-11-22,Qwen-14B-Chat,5,,\n"  # line 6
        f"{GENERAL},2026-11-22,Qwen-14B-Chat,6,,\n"  # line 7: a third read's, repeats line 6
        f"{GENERAL},2026-11-23,Qwen-14B-Chat,7,2,104\n"  # line 8: a fourth's interval
        f"{HARD},2026-11-20,Qwen-14B-Chat,lots,,\n"  # line 9: a read that cannot be read
        f"{HARD},2026-11-21,Qwen-14B-Chat,101,,\n",  # line 10: the rules still checked
        encoding="utf-8",
    )
    result = almanac(data, "import", str(rows), "--allow-removals")
    assert result.returncode == 1, result.stdout + result.stderr
    said = {
        line.split()[2].rstrip(":"): line.split(": ", 1)[1].split("; ")
        for line in result.stdout.splitlines()
        if line.startswith("rejected")
    }
    assert said[GENERAL] == [
        "line[2].score: 150.0 is outside 0-100 for PERCENT",
        "line[5].score: -3.0 is outside 0-100 for PERCENT",
        "line[7]: repeats line 6: one row per model and setting ('Qwen-14B-Chat', setting None)",
        "line[8].interval.high: 104.0 is outside 0-100 for PERCENT",
    ]
    [unreadable, outside] = said[HARD]
    assert unreadable.startswith("line[9].score: ")
    assert outside == "line[10].score: 101.0 is outside 0-100 for PERCENT"
    assert "2 rejected." in result.stdout


def test_a_json_import_names_the_line_each_rejected_item_starts_on(tmp_path: Path) -> None:
    dataset = load_bundled_dataset()
    dataset["models"].append({"slug": "Not A Slug", "name": "X"})
    text = json.dumps(dataset, indent=1)
    slug_line = next(n for n, line in enumerate(text.splitlines()) if '"Not A Slug"' in line)
    path = tmp_path / "almanac.json"
    path.write_text(text, encoding="utf-8")
    result = almanac(tmp_path / "data", "import", str(path))
    assert result.returncode == 1, result.stderr
    [rejected] = [line for line in result.stdout.splitlines() if line.startswith("rejected")]
    # The item's `{` is on the line before its slug's (numbered from 1).
    assert rejected.startswith(f"rejected  models Not A Slug: line {slug_line}: slug:")
