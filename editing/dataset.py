"""The almanac's file format (`benchmark-almanac/1`): reading JSON, NDJSON or CSV (editing.export
writes it).

JSON holds everything: labs, categories, models, benchmarks with their history of reads,
site figures and provenance. CSV holds leaderboard rows only, one per line; the rows of one
benchmark and `read_on` date form one read. The README documents both.
"""

import csv
import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from editing.errors import InvalidInput, Problem

FORMAT = "benchmark-almanac/1"
SECTIONS = ("provenance", "site", "labs", "categories", "models", "benchmarks")
ITEMS = ("labs", "categories", "models", "benchmarks")
"""The sections that hold items, in the order an import takes them."""
CSV_COLUMNS = (
    "benchmark",
    "read_on",
    "model_name",
    "setting",
    "score",
    "source",
    "published_on",
    "note",
    "interval_low",
    "interval_high",
    "interval_level",
    "standard_error",
    "sample_size",
    "reported_by",
)
INTERVAL_COLUMNS = {"interval_low": "low", "interval_high": "high", "interval_level": "level"}
"""CSV's flat columns of an entry's `interval`."""
REQUIRED_CSV_COLUMNS = ("benchmark", "read_on", "model_name", "score")
CSV_LINES = "csv_lines"
"""Beside a read from CSV: each entry's line in the file, so that problems name the line."""

Dataset = dict[str, Any]
"""A file's content as parsed: each section is checked item by item when imported."""


@dataclass(frozen=True)
class Item:
    """One item of a file's section, and the line of the file it is on (where known)."""

    index: int
    value: Any
    line: int | None = None


class Source(Protocol):
    """What an import reads: the file's head (format, provenance, site figures) and its items,
    section by section, as many times as it asks."""

    @property
    def head(self) -> Dataset: ...

    def items(self, section: str, *, tracks: bool | None = None) -> Iterator[Item]:
        """The section's items in the file's order; for benchmarks, only the tracks (True) or
        only the others (False), if asked."""
        ...

    def count(self) -> int:
        """How many items the file holds."""
        ...


@dataclass(frozen=True)
class WholeDataset:
    """A dataset held whole (a JSON or CSV file, or one made in code), and where known the line
    each item starts on in its file."""

    dataset: Dataset
    lines: dict[str, list[int]] = field(default_factory=dict)

    @property
    def head(self) -> Dataset:
        return {key: value for key, value in self.dataset.items() if key not in ITEMS}

    def items(self, section: str, *, tracks: bool | None = None) -> Iterator[Item]:
        lines = self.lines.get(section, [])
        for index, value in enumerate(self.dataset.get(section, [])):
            if tracks is None or _is_track(value) == tracks:
                yield Item(index, value, lines[index] if index < len(lines) else None)

    def count(self) -> int:
        return sum(len(self.dataset.get(section, [])) for section in ITEMS)


# What a line of an NDJSON file holds, a bit each: a file is indexed by a byte a line.
KINDS = {"labs": 1, "categories": 2, "models": 4, "benchmarks": 8}
TRACK_KIND = 16


@dataclass
class NdjsonFile:
    """An NDJSON file, read a line at a time: each pass over a section reads the file again,
    and parses only the lines that hold it. Memory holds one line, the head, and a byte a
    line, whatever the file's size."""

    path: Path
    head: Dataset
    kinds: bytearray
    counts: dict[str, int] = field(default_factory=dict)

    @classmethod
    def checked(cls, path: Path) -> "NdjsonFile":
        """The file, every line checked first (UTF-8, JSON, an object of known sections), so
        that a bad line is refused before anything is written."""
        head: Dataset = {}
        kinds = bytearray()
        counts = dict.fromkeys(ITEMS, 0)
        with path.open("rb") as file:
            for number, raw in enumerate(file, start=1):
                part = _line(raw, number)
                kind = 0
                for key, value in (part or {}).items():
                    if key in ITEMS and isinstance(value, list):
                        counts[key] += len(value)
                        kind |= KINDS[key]
                        if key == "benchmarks" and any(_is_track(item) for item in value):
                            kind |= TRACK_KIND
                    else:
                        head[key] = value
                kinds.append(kind)
        checked_dataset({**head, **{section: [] for section in ITEMS if counts[section]}})
        return cls(path, head, kinds, counts)

    def items(self, section: str, *, tracks: bool | None = None) -> Iterator[Item]:
        wanted = TRACK_KIND if tracks else KINDS[section]
        index = 0
        with self.path.open("rb") as file:
            for number, (raw, kind) in enumerate(zip(file, self.kinds, strict=True), start=1):
                if not kind & wanted:
                    continue
                for value in (_line(raw, number) or {}).get(section, []):
                    if tracks is None or _is_track(value) == tracks:
                        yield Item(index, value, number)
                    index += 1

    def count(self) -> int:
        return sum(self.counts.values())


def read_dataset(path: Path) -> Source:
    """What a `.json`, `.ndjson` or `.csv` file holds; `InvalidInput` if it cannot be read (not
    UTF-8, not JSON, nested too deeply) or its shape is wrong, naming the line. An NDJSON file is
    read a line at a time; the others whole."""
    if path.suffix.lower() == ".ndjson":
        return NdjsonFile.checked(path)
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise InvalidInput.at(("file",), f"not UTF-8 text (line {line})") from error
    if path.suffix.lower() == ".csv":
        return WholeDataset(dataset_from_csv(text))
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise InvalidInput.at(
            ("file",), f"not valid JSON (line {error.lineno}, column {error.colno}): {error.msg}"
        ) from error
    except RecursionError as error:
        raise InvalidInput.at(("file",), _too_deep(text, 1)) from error
    return WholeDataset(checked_dataset(document), _item_lines(text))


MAX_NESTING = 100
"""How deep a file's JSON is said to nest when Python's reader gives up (the format needs 5)."""


def _line(raw: bytes, number: int) -> dict[str, Any] | None:
    """An NDJSON line's object (None for a blank line), or why it is not one."""
    try:
        text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
    except UnicodeDecodeError as error:
        raise InvalidInput.at(
            ("line", number), f"not UTF-8 text (byte {error.start + 1} of the line)"
        ) from error
    if not text.strip():
        return None
    try:
        part = json.loads(text)
    except json.JSONDecodeError as error:
        raise InvalidInput.at(("line", number), f"not valid JSON: {error.msg}") from error
    except RecursionError as error:
        raise InvalidInput.at(("line", number), _too_deep(text, None)) from error
    if not isinstance(part, dict):
        raise InvalidInput.at(("line", number), "expected a JSON object")
    return part


def _too_deep(text: str, line: int | None) -> str:
    """That JSON nests deeper than `MAX_NESTING`, and where (outside strings): the line of
    `text` (which starts on `line`) where it does, unless None."""
    depth, in_string, escaped = 0, False, False
    for char in text:
        if in_string:
            in_string = escaped or char != '"'
            escaped = not escaped and char == "\\"
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > MAX_NESTING:
                break
        elif char in "]}":
            depth -= 1
        if char == "\n" and line is not None:
            line += 1
    where = "" if line is None else f"from line {line}; "
    return f"nests more than {MAX_NESTING} levels deep ({where}the format needs 5)"


_BLANK = re.compile(r"[ \t\n\r]*")


def _item_lines(text: str) -> dict[str, list[int]]:
    """The line each item of each section starts on in a JSON document already parsed (an
    object of sections), found by walking its top level with the standard decoder."""
    decoder, lines = json.JSONDecoder(), dict[str, list[int]]()
    line, counted = 1, 0

    def skip(at: int, over: str = "") -> int:
        at = _BLANK.match(text, at).end()  # type: ignore[union-attr]
        return at + 1 if over and text.startswith(over, at) else at

    def line_at(at: int) -> int:
        nonlocal line, counted
        line, counted = line + text.count("\n", counted, at), at
        return line

    try:
        at = skip(0, "{")
        while not text.startswith("}", at := skip(at)):
            key, at = decoder.raw_decode(text, at)
            at = skip(skip(at, ":"))
            if key in ITEMS and text.startswith("[", at):
                found: list[int] = []
                lines[key] = found
                while not text.startswith("]", at := skip(at + 1 if not found else at)):
                    found.append(line_at(at))
                    _, at = decoder.raw_decode(text, at)
                    at = skip(at, ",")
                at += 1
            else:
                _, at = decoder.raw_decode(text, at)
            at = skip(at, ",")
    except (ValueError, IndexError):  # not the shape the lines are for: none are named
        return {}
    return lines


def _is_track(item: Any) -> bool:
    return isinstance(item, dict) and item.get("parent") is not None


def as_source(data: Dataset | Source) -> Source:
    return WholeDataset(data) if isinstance(data, dict) else data


def checked_dataset(data: Any) -> Dataset:
    if not isinstance(data, dict):
        raise InvalidInput.at(("file",), "expected a JSON object with a `format` field")
    if data.get("format") != FORMAT:
        raise InvalidInput.at(("format",), f"expected {FORMAT!r}, got {data.get('format')!r}")
    problems = [
        Problem((key,), f"unknown section (known: format, {', '.join(SECTIONS)})")
        for key in data
        if key not in (*SECTIONS, "format")
    ]
    for section in ("provenance", "labs", "categories", "models", "benchmarks"):
        if not isinstance(data.get(section, []), list):
            problems.append(Problem((section,), "expected a list"))
    if problems:
        raise InvalidInput(problems)
    return dict(data)


def dataset_from_csv(text: str) -> Dataset:
    """Leaderboard rows grouped into reads: one per benchmark and `read_on` date."""
    reader = csv.DictReader(io.StringIO(text))
    columns = reader.fieldnames or []
    problems = [
        Problem(("header",), f"missing column {name!r}")
        for name in REQUIRED_CSV_COLUMNS
        if name not in columns
    ] + [
        Problem(("header",), f"unknown column {name!r}")
        for name in columns
        if name not in CSV_COLUMNS
    ]
    if problems:
        raise InvalidInput(problems)
    reads: dict[tuple[str, str], list[tuple[int, dict[str, Any]]]] = {}
    for line, row in enumerate(reader, start=2):
        if None in row:  # DictReader's key for the fields past the header's
            fields = len(columns) + len(row[None])
            raise InvalidInput.at(
                ("line", line), f"{fields} fields, where the header names {len(columns)}"
            )
        entry = {
            key: (value or "").strip(" ") or None  # spaces only: a control character is refused
            for key, value in row.items()
            if key not in ("benchmark", "read_on", *INTERVAL_COLUMNS)
        }
        interval = {
            end: value
            for column, end in INTERVAL_COLUMNS.items()
            if (value := (row.get(column) or "").strip())
        }
        if interval:
            entry["interval"] = interval
        read_key = ((row["benchmark"] or "").strip(), (row["read_on"] or "").strip())
        reads.setdefault(read_key, []).append((line, entry))
    benchmarks: dict[str, dict[str, Any]] = {}
    for (slug, read_on), rows in sorted(reads.items(), key=lambda item: item[0][1]):
        benchmark = benchmarks.setdefault(slug, {"slug": slug, "reads": []})
        benchmark["reads"].append(
            {
                "read_on": read_on,
                "entries": [entry for _, entry in rows],
                CSV_LINES: [line for line, _ in rows],
            }
        )
    return {"format": FORMAT, "benchmarks": list(benchmarks.values())}


def dataset_lines(dataset: Dataset) -> Iterator[Dataset]:
    """The dataset as NDJSON's lines, each a dataset of its own: the format, provenance and site
    figures first, then one line per lab, category, model and benchmark, in the file's order."""
    yield {key: dataset[key] for key in ("format", "provenance", "site") if key in dataset}
    for section in ITEMS:
        for item in dataset.get(section, []):
            yield {section: [item]}


def dataset_from_lines(text: str) -> Dataset:
    """The dataset NDJSON lines hold together (what `dataset_lines` writes)."""
    merged: Dataset = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            part = json.loads(line)
        except json.JSONDecodeError as error:
            raise InvalidInput.at(("line", number), f"not valid JSON: {error.msg}") from error
        if not isinstance(part, dict):
            raise InvalidInput.at(("line", number), "expected a JSON object")
        for key, value in part.items():
            if key in ITEMS and isinstance(value, list):
                merged.setdefault(key, []).extend(value)
            else:
                merged[key] = value
    return checked_dataset(merged)
