"""The almanac's file format (`benchmark-almanac/1`): reading JSON or CSV, and exporting.

JSON holds everything: labs, categories, models, benchmarks with their history of reads,
site figures and provenance. CSV holds leaderboard rows only, one per line; the rows of one
benchmark and `read_on` date form one read. The README documents both.
"""

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from editing.errors import InvalidInput, Problem
from editing.inputs import (
    OMITTED_WHEN_EMPTY,
    READ_REQUEST_ONLY,
    BenchmarkFields,
    EntryFields,
    ModelFields,
    ReadFields,
    SourceFields,
)
from store import BenchmarkDoc, ModelDoc, Store

FORMAT = "benchmark-almanac/1"
SECTIONS = ("provenance", "site", "labs", "categories", "models", "benchmarks")
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


def read_dataset(path: Path) -> Dataset:
    """The dataset in a `.json`, `.ndjson` or `.csv` file; `InvalidInput` if its shape is wrong."""
    text = path.read_text(encoding="utf-8-sig")
    if path.suffix.lower() == ".csv":
        return dataset_from_csv(text)
    if path.suffix.lower() == ".ndjson":
        return dataset_from_lines(text)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise InvalidInput.at(
            ("file",), f"not valid JSON (line {error.lineno}, column {error.colno}): {error.msg}"
        ) from error
    return checked_dataset(data)


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
    for section in ("labs", "categories", "models", "benchmarks"):
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
            if key in ("labs", "categories", "models", "benchmarks") and isinstance(value, list):
                merged.setdefault(key, []).extend(value)
            else:
                merged[key] = value
    return checked_dataset(merged)


async def export_dataset(store: Store) -> Dataset:
    """Everything stored, in the import format: importing it into an empty store gives it back."""
    benchmarks = sorted(
        await store.benchmarks(), key=lambda b: (b["parent"] is not None, b["slug"])
    )
    models = sorted(await store.models(), key=lambda model: model["slug"])
    return {
        "format": FORMAT,
        "provenance": await store.provenance(),
        "site": await store.site_figures(),
        "labs": await store.labs(),
        "categories": await store.known_categories(),
        "models": [_exported_model(model) for model in models],
        "benchmarks": [_exported_benchmark(benchmark) for benchmark in benchmarks],
    }


# The file holds what the write side takes (editing.inputs), field for field: its format is
# those declarations', and a field added there is exported and imported with no change here.


def _exported_model(doc: ModelDoc) -> dict[str, Any]:
    return {
        "slug": doc["slug"],
        **{name: doc[name] for name in ModelFields.model_fields},  # type: ignore[literal-required]
        "lab": doc["lab"]["slug"] if doc["lab"] else None,
    }


def _exported_benchmark(doc: BenchmarkDoc) -> dict[str, Any]:
    source = doc["source"]
    lab = None if source is None else source.get("lab")
    return {
        "slug": doc["slug"],
        # A field added later is absent from older documents: exported empty.
        **{name: doc.get(name) for name in BenchmarkFields.model_fields},
        "made_by": doc["made_by"]["slug"] if doc["made_by"] else None,
        "category": doc["category"]["slug"],
        "source": None
        if source is None
        else {
            **{name: source.get(name) for name in SourceFields.model_fields},
            "lab": None if lab is None else lab["slug"],
        },
        "reads": [
            {
                **{
                    name: read[name]  # type: ignore[literal-required]
                    for name in ReadFields.model_fields
                    if name not in READ_REQUEST_ONLY
                },
                "entries": [
                    {
                        name: entry.get(name)
                        for name in EntryFields.model_fields
                        if name in entry or name not in OMITTED_WHEN_EMPTY
                    }
                    for entry in read["entries"]
                ],
            }
            for read in doc.get("history", [])
        ],
    }
