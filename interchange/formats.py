"""Which tool wrote a file, told from its content (where `--format` does not say), and the files
a folder holds."""

import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from interchange.eee import read_eee
from interchange.inspect_log import read_inspect
from interchange.lm_eval import read_lm_eval
from interchange.results import FileRefused, ToolFile, as_text, file_bytes, parsed_json

TOOL_FORMATS = ("eee", "lm-eval", "inspect")
ALMANAC_FORMATS = ("json", "ndjson", "csv")
"""The almanac's own formats (editing.read_dataset reads them)."""
READERS: dict[str, Callable[[Path], ToolFile]] = {
    "eee": read_eee,
    "lm-eval": read_lm_eval,
    "inspect": read_inspect,
}
SUFFIXES = (".json", ".jsonl", ".ndjson", ".csv", ".eval")


def files_in(paths: Iterable[Path]) -> list[Path]:
    """Each file named, and the files a folder holds (all the way down, by name), in order."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(
                child
                for child in path.rglob("*")
                if child.is_file() and child.suffix.lower() in SUFFIXES
            )
        else:
            found.append(path)
    return found


def detect(path: Path) -> str:
    """The file's format, from what it holds: an Inspect `.eval` archive or JSON log, Every Eval
    Ever records, lm-eval results, or one of the almanac's own; refused when it cannot tell."""
    suffix = path.suffix.lower()
    if suffix == ".eval":
        return "inspect" if zipfile.is_zipfile(path) else _unknown(path)
    if suffix == ".csv":
        return "csv"
    data, _ = file_bytes(path)
    text = as_text(path, data)
    first = _first_value(path, text, whole=suffix == ".json")
    if not isinstance(first, dict):
        return _unknown(path)
    keys = set(first)
    found = [
        kind
        for kind, known in (
            ("eee", {"schema_version", "evaluation_results"} <= keys),
            (
                "lm-eval",
                "results" in keys and bool({"n-samples", "lm_eval_version", "configs"} & keys),
            ),
            ("inspect", {"eval", "status", "version"} <= keys),
            ("json" if suffix == ".json" else "ndjson", "format" in keys),
        )
        if known
    ]
    if len(found) != 1:
        return _unknown(path)
    return found[0]


def _first_value(path: Path, text: str, *, whole: bool) -> Any:
    """The document (a JSON file), or the first line's (JSON Lines); truncated or broken JSON is
    refused here, with its line."""
    if whole:
        return parsed_json(path, text)
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            return parsed_json(path, line, f"line {number}")
    return None


def _unknown(path: Path) -> str:
    raise FileRefused(
        path,
        None,
        "cannot tell which format it is in: pass --format "
        f"({', '.join((*TOOL_FORMATS, *ALMANAC_FORMATS))})",
    )


def read_tool_file(path: Path, kind: str) -> ToolFile:
    return READERS[kind](path)
