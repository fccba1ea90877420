"""Bad files: each refused with one line naming the file, where in it (line or JSON path) and
what is wrong, and nothing written: a truncated file, a schema-invalid record, an unknown task,
a unit that cannot be reconciled, a score out of range, an Inspect log of a failed run."""

import json
from pathlib import Path
from typing import Any

import pytest

from editing import import_dataset
from interchange import FileRefused, ImportOptions, ImportRefused, import_tool_files, read_files
from store import Store
from tests.conftest import snapshot
from tests.interchange.conftest import LM_EVAL, MMLU_PRO, add_benchmarks, stamp


async def refusal(store: Store, paths: list[Path], **options: Any) -> str:
    """What the import of `paths` says, checked to have written nothing."""
    before = await snapshot(store)

    async def attempt() -> None:
        files = read_files(paths, options.pop("format", None))
        await import_tool_files(store, files, ImportOptions(**options), stamp())

    with pytest.raises((FileRefused, ImportRefused)) as refused:
        await attempt()
    assert await snapshot(store) == before
    said = str(refused.value)
    assert "\n" not in said
    return said


def lm_eval_with(tmp_path: Path, change: Any) -> Path:
    document = json.loads(LM_EVAL.read_text())
    change(document)
    path = tmp_path / LM_EVAL.name
    path.write_text(json.dumps(document, indent=2))
    return path


async def test_a_truncated_file(store: Store, tmp_path: Path) -> None:
    await add_benchmarks(store)
    text = LM_EVAL.read_text()
    cut = tmp_path / LM_EVAL.name
    cut.write_text(text[: len(text) // 2])
    said = await refusal(store, [cut])
    assert said.startswith(f"{cut}, line 139, column 22: not valid JSON: Unterminated string")


async def test_a_truncated_record_line(store: Store, tmp_path: Path) -> None:
    await add_benchmarks(store)
    record = json.dumps(json.loads(MMLU_PRO.read_text()))
    lines = tmp_path / "records.jsonl"
    lines.write_text(record + "\n" + record[:500] + "\n")
    said = await refusal(store, [lines], format="eee")
    assert said.startswith(f"{lines}, line 2: not valid JSON: ")


async def test_a_record_that_breaks_its_schema(store: Store, tmp_path: Path) -> None:
    await add_benchmarks(store)
    record = json.loads(MMLU_PRO.read_text())
    del record["evaluation_results"][3]["score_details"]
    broken = tmp_path / "broken.eee.json"
    broken.write_text(json.dumps(record))
    said = await refusal(store, [broken])
    assert said == (
        f"{broken}, $.evaluation_results[3]: not valid Every Eval Ever 0.2.2: "
        "'score_details' is a required property"
    )


async def test_a_record_of_a_schema_version_not_known(store: Store, tmp_path: Path) -> None:
    record = json.loads(MMLU_PRO.read_text())
    record["schema_version"] = "9.0"
    newer = tmp_path / "newer.eee.json"
    newer.write_text(json.dumps(record))
    said = await refusal(store, [newer])
    assert said.startswith(f"{newer}, $.schema_version: schema version '9.0' is not one")


async def test_every_unknown_task_named_at_once(store: Store) -> None:
    said = await refusal(store, [LM_EVAL])
    assert said == (
        "no benchmark matches (by slug, name or alias; say which with --benchmark or --map): "
        f"""'math_perturbed_full' ({LM_EVAL}, $["results"]["math_perturbed_full"]["exact_match,none"]); """
        f"""'math_rephrased_full' ({LM_EVAL}, $["results"]["math_rephrased_full"]["exact_match,none"])"""
    )


async def test_a_unit_that_cannot_be_reconciled(store: Store) -> None:
    # A benchmark scored in points on its own scale, with no ceiling: 0-1 has nowhere to go.
    points = {
        "format": "benchmark-almanac/1",
        "categories": [{"slug": "knowledge", "name": "Knowledge"}],
        "benchmarks": [
            {
                "slug": "math-in-points",
                "name": "Math in points",
                "metric": {"name": "Points", "unit": "POINTS", "higher_is_better": True},
                "category": "knowledge",
                "status": "IN_USE",
            }
        ],
    }
    assert not (await import_dataset(store, points, stamp())).rejected
    said = await refusal(store, [LM_EVAL], benchmark="math-in-points")
    assert said.startswith(
        f"""{LM_EVAL}, $["results"]["math_perturbed_full"]["exact_match,none"]: the benchmark's """
        "unit POINTS has no declared range (no ceiling) to put 0 to 1 in (math-in-points)"
    )


async def test_a_score_out_of_its_declared_range(store: Store, tmp_path: Path) -> None:
    await add_benchmarks(store)

    def beyond(document: dict[str, Any]) -> None:
        document["results"]["math_rephrased_full"]["exact_match,none"] = 1.7

    path = lm_eval_with(tmp_path, beyond)
    said = await refusal(store, [path])
    assert said == (
        f"""{path}, $["results"]["math_rephrased_full"]["exact_match,none"]: score 1.7 is """
        "outside the scale 0 to 1 the file declares (math-rephrased-full)"
    )


async def test_an_inspect_log_of_a_failed_run(store: Store, failed_inspect_log: Path) -> None:
    await add_benchmarks(store)
    said = await refusal(store, [failed_inspect_log])
    assert said == (
        f"{failed_inspect_log}, $.status: the run did not finish (status error): "
        "ValueError('custom_outputs ran out of values')"
    )


async def test_a_file_whose_format_cannot_be_told(store: Store, tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    other.write_text('{"results": {}}')
    said = await refusal(store, [other])
    assert said == (
        f"{other}: cannot tell which format it is in: pass --format "
        "(eee, lm-eval, inspect, json, ndjson, csv)"
    )


async def test_two_scores_for_one_row(store: Store) -> None:
    await add_benchmarks(store)
    said = await refusal(store, [LM_EVAL], benchmark="math-rephrased-full")
    assert "a second score for" in said
    assert said.startswith(f"""{LM_EVAL}, $["results"]["math_rephrased_full"]""")
