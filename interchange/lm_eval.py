"""lm-evaluation-harness results in: the `results_<date>.json` its EvaluationTracker writes.

`results[task]["<metric>,<filter>"]` is a score, `"<metric>_stderr,<filter>"` its standard error
(the string "N/A" when none was computed), `n-samples[task].effective` the items scored,
`model_name` (or `pretrained=` in `config.model_args`) the model, `date` the run's Unix time.
"""

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from interchange.results import (
    FileRefused,
    Scale,
    ToolFile,
    ToolResult,
    as_text,
    file_bytes,
    json_path,
    parsed_json,
)

PROPORTIONS = frozenset(
    {"acc", "acc_norm", "exact_match", "mc1", "mc2", "f1", "em", "pass@1", "pass_at_1"}
)
"""The harness's metrics that are shares of items, 0 to 1 (its own `mean` aggregations of
0/1 outcomes); any other metric has no declared scale, and cannot be converted to a unit."""
PROPORTION = Scale(0.0, 1.0)
NOT_SCORES = frozenset({"alias", "samples", "name", "sample_len", "sample_count"})


def read_lm_eval(path: Path) -> ToolFile:
    data, sha256 = file_bytes(path)
    document = parsed_json(path, as_text(path, data))
    if not isinstance(document, dict) or not isinstance(document.get("results"), dict):
        raise FileRefused(path, "$.results", "expected lm-eval's results object")
    model = _model_name(path, document)
    run_on = _run_date(document.get("date"))
    version = str(document.get("lm_eval_version") or "unknown")
    results = []
    for task, metrics in document["results"].items():
        if not isinstance(metrics, dict):
            raise FileRefused(path, json_path("results", task), "expected an object of metrics")
        shots = (document.get("n-shot") or {}).get(task)
        samples = ((document.get("n-samples") or {}).get(task) or {}).get("effective")
        scores = [
            (key, value)
            for key, value in metrics.items()
            if key not in NOT_SCORES
            and "_stderr," not in key
            and isinstance(value, int | float)
            and not isinstance(value, bool)
        ]
        for key, value in scores:
            metric, _, kept = key.partition(",")
            stderr = metrics.get(f"{metric}_stderr,{kept or 'none'}")
            results.append(
                ToolResult(
                    task=task,
                    where=json_path("results", task, key),
                    model_name=model,
                    score=float(value),
                    scale=PROPORTION if metric in PROPORTIONS else None,
                    metric=metric,
                    standard_error=float(stderr) if isinstance(stderr, int | float) else None,
                    sample_size=samples if isinstance(samples, int) and samples > 0 else None,
                    setting=_setting(metric, kept, shots, several=len(scores) > 1),
                    published_on=run_on,
                )
            )
    return ToolFile(path, sha256, "lm-evaluation-harness", version, results)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _model_name(path: Path, document: dict[str, Any]) -> str:
    name = document.get("model_name")
    if isinstance(name, str) and name:
        return name
    arguments = (document.get("config") or {}).get("model_args")
    if isinstance(arguments, dict) and isinstance(arguments.get("pretrained"), str):
        return str(arguments["pretrained"])
    if isinstance(arguments, str):
        for part in arguments.split(","):
            key, _, value = part.partition("=")
            if key.strip() == "pretrained" and value.strip():
                return value.strip()
    raise FileRefused(path, "$.config.model_args", "names no model (no model_name, no pretrained=)")


def _run_date(stamp: Any) -> str | None:
    if not _number(stamp):
        return None
    return datetime.fromtimestamp(float(stamp), UTC).date().isoformat()


def _setting(metric: str, kept: str, shots: Any, *, several: bool) -> str | None:
    """The row's setting: its shots, the harness's filter if any, and the metric where the
    task gives several (each is a row of its own)."""
    parts = [metric] if several else []
    if isinstance(shots, int):
        parts.append(f"{shots}-shot")
    if kept and kept != "none":
        parts.append(f"filter {kept}")
    return ", ".join(parts) or None
