"""Every Eval Ever records in: a `.json` file holding one record, or `.jsonl` holding one a line.

Every record is checked against its schema before any is read. Who evaluated comes from
`evaluator_relationship` (or, in records the almanac wrote, the reporter it kept); the
uncertainty from `score_details.uncertainty`; the scale from `metric_config`'s min and max.
"""

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from interchange.eee_schema import record_problem
from interchange.results import (
    UNBOUNDED,
    FileRefused,
    Scale,
    ToolFile,
    ToolResult,
    as_text,
    file_bytes,
    parsed_json,
)

RELATIONSHIPS = {"first_party": "MODEL_DEVELOPER", "third_party": "THIRD_PARTY"}
"""`evaluator_relationship` as who reported a score; `collaborative` and `other` name no
reporter of the almanac's (the benchmark's source then stands, or `--reported-by`)."""
KEPT_REPORTER = "almanac_reported_by"
"""In records the almanac writes: the row's own reporter ("" for none), so a round trip keeps it."""
KEPT_BENCHMARK = "almanac_benchmark"
"""In records the almanac writes: the benchmark's slug, which the import matches first."""
ALMANAC_DETAILS = ("setting", "source", "published_on", "note")
"""A row's fields the almanac writes in `score_details.details`, read back as they are."""


def records(path: Path, text: str) -> Iterator[tuple[str, Any]]:
    """Each record with where it starts: `line N` in a `.jsonl` file, else the file's `$`."""
    if path.suffix.lower() != ".jsonl":
        yield "$", parsed_json(path, text)
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            yield f"line {number}", parsed_json(path, line, f"line {number}")


def read_eee(path: Path) -> ToolFile:
    """The scores of every record in the file, each record checked against its schema first."""
    data, sha256 = file_bytes(path)
    text = as_text(path, data)
    found = list(records(path, text))
    if not found:
        raise FileRefused(path, None, "holds no Every Eval Ever record")
    for start, record in found:
        if (problem := record_problem(record)) is not None:
            where, message = problem
            raise FileRefused(path, _at(start, where), message)
    versions = sorted({record["schema_version"] for _, record in found})
    results = [result for start, record in found for result in _results(path, start, record)]
    return ToolFile(path, sha256, "Every Eval Ever", "/".join(versions), results)


def _at(start: str, where: str) -> str:
    return where if start == "$" else f"{start}, {where}"


def _results(path: Path, start: str, record: dict[str, Any]) -> Iterator[ToolResult]:
    source_metadata = record["source_metadata"]
    details = source_metadata.get("additional_details") or {}
    if KEPT_REPORTER in details:
        reported_by = details[KEPT_REPORTER] or None
    else:
        reported_by = RELATIONSHIPS.get(source_metadata["evaluator_relationship"])
    model = record["model_info"]
    run_on = _date(record.get("evaluation_timestamp"))
    for index, result in enumerate(record["evaluation_results"]):
        where = _at(start, f"$.evaluation_results[{index}]")
        config = result["metric_config"]
        score_details = result["score_details"]
        kept = score_details.get("details") or {}
        from_almanac = KEPT_REPORTER in details
        uncertainty = score_details.get("uncertainty") or {}
        yield ToolResult(
            task=details.get(KEPT_BENCHMARK) or result["evaluation_name"],
            where=where,
            model_name=model["name"],
            score=score_details["score"],
            scale=_scale(config),
            metric=config.get("metric_name") or config.get("metric_id"),
            unit=config.get("metric_unit"),
            standard_error=(uncertainty.get("standard_error") or {}).get("value"),
            sample_size=uncertainty.get("num_samples"),
            interval=_interval(path, where, score_details["score"], uncertainty),
            reported_by=reported_by,
            setting=kept.get("setting") if from_almanac else None,
            source=kept.get("source") if from_almanac else source_metadata.get("source_name"),
            published_on=kept.get("published_on")
            if from_almanac
            else _date(result.get("evaluation_timestamp")) or run_on,
            note=kept.get("note") if from_almanac else None,
            kept_source=from_almanac,
        )


def _scale(config: dict[str, Any]) -> Scale | None:
    ends = [config.get("min_score"), config.get("max_score")]
    low, high = (
        (-UNBOUNDED if end == "-Infinity" else UNBOUNDED) if isinstance(end, str) else end
        for end in ends
    )
    return None if low is None or high is None else Scale(float(low), float(high))


def _interval(
    path: Path, where: str, score: float, uncertainty: dict[str, Any]
) -> tuple[float, float, float] | None:
    """The published interval as (low, high, level). Some published records give its bounds as
    offsets from the score (-0.0467, 0.0467: Global MMLU Lite's): read so only when they are
    symmetric about zero and do not hold the score; any other interval that does not hold the
    score is refused."""
    interval = uncertainty.get("confidence_interval")
    if interval is None:
        return None
    low, high = interval["lower"], interval["upper"]
    level = interval.get("confidence_level", 0.95)
    if low <= score <= high:
        return low, high, level
    if low == -high and high > 0:
        return score + low, score + high, level
    raise FileRefused(
        path,
        f"{where}.score_details.uncertainty.confidence_interval",
        f"{low:g} to {high:g} does not hold the score {score:g}",
    )


def _date(timestamp: Any) -> str | None:
    """A day from an EEE timestamp (Unix seconds, or ISO 8601); None if it says none."""
    if not isinstance(timestamp, str) or not timestamp:
        return None
    try:
        return datetime.fromtimestamp(float(timestamp), UTC).date().isoformat()
    except ValueError:
        pass
    try:
        return datetime.fromisoformat(timestamp).date().isoformat()
    except ValueError:
        return None
