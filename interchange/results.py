"""What a tool's file says, read into one shape whatever the tool: each score with where it is in
the file, and the file's provenance. The readers (eee, lm_eval, inspect_log) make these; the
import (imports.py) turns them into almanac rows."""

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

UNBOUNDED = float("inf")


@dataclass(frozen=True)
class Scale:
    """The range a tool declares for a metric's scores: (0, 1) for a proportion; None where
    it declares none (an end may be infinite: unbounded)."""

    low: float
    high: float

    def describe(self) -> str:
        return f"{self.low:g} to {self.high:g}"


@dataclass(frozen=True)
class ToolResult:
    """One score a file holds: a model on a task, as the tool wrote it (on its own scale)."""

    task: str
    """The tool's task or evaluation name, matched to a benchmark."""
    where: str
    """Its JSON path in the file, e.g. `results.gsm8k["exact_match,none"]`."""
    model_name: str
    score: float
    scale: Scale | None
    metric: str | None = None
    unit: str | None = None
    """The metric's unit as the file names it (Every Eval Ever's `metric_unit`: `percent`, ...)."""
    standard_error: float | None = None
    sample_size: int | None = None
    interval: tuple[float, float, float] | None = None
    """(low, high, level) on the tool's scale, as published."""
    reported_by: str | None = None
    """A SourceKind's name, where the file says who evaluated."""
    setting: str | None = None
    source: str | None = None
    published_on: str | None = None
    note: str | None = None
    kept_source: bool = False
    """True where `source` is the row's own, as the almanac wrote it (a round trip): the
    file's provenance is then not added to it."""


@dataclass(frozen=True)
class ToolFile:
    """A file read: what made it, its name and SHA-256, and its scores."""

    path: Path
    sha256: str
    tool: str
    version: str
    results: list[ToolResult] = field(default_factory=list)

    def provenance(self) -> str:
        """How a row read from this file came to the almanac (the row's source, and a line of
        the almanac's provenance)."""
        return f"{self.tool} {self.version}: {self.path.name} (sha256 {self.sha256})"


class FileRefused(Exception):
    """A file that cannot be imported: the file, where in it, and what is wrong (one line)."""

    def __init__(self, path: Path | str, where: str | None, message: str) -> None:
        self.path = str(path)
        self.where = where
        self.message = message
        located = f"{self.path}, {where}" if where else self.path
        super().__init__(f"{located}: {message}")


def refused_whole(problems: list[FileRefused]) -> FileRefused:
    """Several files' problems as one refusal: each named, in one line."""
    if len(problems) == 1:
        return problems[0]
    first = problems[0]
    joined = "; ".join(str(problem) for problem in problems)
    refusal = FileRefused(first.path, first.where, first.message)
    refusal.args = (joined,)
    return refusal


def file_bytes(path: Path) -> tuple[bytes, str]:
    """The file's content and its SHA-256, or why it cannot be read."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise FileRefused(path, None, f"cannot be read: {error.strerror}") from error
    return data, hashlib.sha256(data).hexdigest()


def as_text(path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise FileRefused(path, f"line {line}", "not UTF-8 text") from error


def parsed_json(path: Path, text: str, where: str | None = None) -> Any:
    """`text` as JSON, or why not: where (`line N, column M` of the file, or `where` for one
    line of it), and what is wrong; JSON nested deeper than Python reads is refused too."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        at = where or f"line {error.lineno}, column {error.colno}"
        raise FileRefused(path, at, f"not valid JSON: {error.msg}") from error
    except RecursionError as error:
        raise FileRefused(path, where, "not JSON the almanac reads: nested too deeply") from error


def json_path(*parts: str | int) -> str:
    """`$["results"]["gsm8k"]["exact_match,none"]`: where a value is in a JSON document."""
    return "$" + "".join(f"[{json.dumps(part, ensure_ascii=False)}]" for part in parts)
