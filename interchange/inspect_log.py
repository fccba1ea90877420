"""Inspect logs in (`.eval` or `.json`), read with Inspect's own reader, header only: the run's
task, model, status and its scorers' metrics (`accuracy` with its `stderr`, ...).

Inspect is an optional extra (`pip install '.[inspect]'`): without it, a log is refused with the
line that says how to install it.
"""

import zipfile
from pathlib import Path
from typing import Any

from interchange.archive_limits import MAX_UNPACKED_BYTES, unpacks_within
from interchange.results import FileRefused, Scale, ToolFile, ToolResult, file_bytes

INSTALL = "reading Inspect logs needs Inspect: pip install '.[inspect]'"
PROPORTIONS = frozenset({"accuracy"})
"""Inspect's metrics that are shares of samples, 0 to 1 (`accuracy()`: the mean of CORRECT as 1,
INCORRECT as 0); any other has no declared scale."""
UNCERTAINTY = frozenset({"stderr", "std", "var", "bootstrap_stderr"})


def inspect_available() -> bool:
    try:
        import inspect_ai.log  # noqa: F401
    except ImportError:
        return False
    return True


def read_inspect(path: Path) -> ToolFile:
    _, sha256 = file_bytes(path)
    try:
        from inspect_ai.log import read_eval_log
    except ImportError as error:
        raise FileRefused(path, None, INSTALL) from error
    try:
        small = not zipfile.is_zipfile(path) or unpacks_within(path)
    except Exception as error:
        raise FileRefused(path, None, f"not a readable archive: {_first_line(error)}") from error
    if not small:
        raise FileRefused(path, None, f"unpacks to more than {MAX_UNPACKED_BYTES} bytes")
    try:
        log = read_eval_log(str(path), header_only=True)
    except Exception as error:
        raise FileRefused(
            path, None, f"not a readable Inspect log: {_first_line(error)}"
        ) from error
    if log.status != "success":
        said = f": {_first_line(log.error.message)}" if log.error is not None else ""
        raise FileRefused(path, "$.status", f"the run did not finish (status {log.status}){said}")
    if log.results is None or not log.results.scores:
        raise FileRefused(path, "$.results", "the run has no scores")
    version = str(log.eval.packages.get("inspect_ai") or log.version)
    run_on = log.eval.created[:10] if log.eval.created else None
    samples = log.results.completed_samples or None
    results = []
    for index, score in enumerate(log.results.scores):
        metrics: dict[str, Any] = score.metrics
        stderr = metrics.get("stderr")
        for name, metric in metrics.items():
            if name in UNCERTAINTY:
                continue
            several = (
                len([m for m in metrics if m not in UNCERTAINTY]) > 1 or len(log.results.scores) > 1
            )
            results.append(
                ToolResult(
                    task=log.eval.task,
                    where=f"$.results.scores[{index}].metrics.{name}",
                    model_name=log.eval.model,
                    score=float(metric.value),
                    scale=Scale(0.0, 1.0) if name in PROPORTIONS else None,
                    metric=name,
                    standard_error=float(stderr.value) if stderr is not None else None,
                    sample_size=score.scored_samples or samples,
                    setting=f"{score.name} {name}" if several else None,
                    published_on=run_on,
                )
            )
    return ToolFile(path, sha256, "Inspect", version, results)


def _first_line(error: object) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__
