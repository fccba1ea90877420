"""The Every Eval Ever lines a release and `/export.eee.jsonl` write (`eee_benchmark_bytes`,
spliced from each benchmark's parts written once) are byte for byte what orjson writes of the
records' dicts (`benchmark_records`), on the bundled almanac with rows imported from the
published files, and on its benchmarks changed into every shape a record can take."""

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from interchange.eee_export import benchmark_records, eee_benchmark_bytes
from store import BenchmarkDoc, Date, Store
from tests.interchange.test_eee_export import with_tool_results


def dicts_written(doc: BenchmarkDoc) -> list[bytes]:
    """The records as orjson writes their dicts: compact, keys sorted, a line each."""
    option = orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE
    return [orjson.dumps(record, option=option) for record in benchmark_records(doc)]


def reshaped(doc: BenchmarkDoc) -> Iterator[BenchmarkDoc]:
    """The benchmark with no source, a source without a URL or kind, each metric unit (a
    points one with and without a ceiling), text JSON must escape, and rows without dates,
    with every kind of uncertainty, and with reporters."""
    yield {**doc, "source": None}
    if doc["source"] is not None:
        yield {**doc, "source": {**doc["source"], "url": None, "kind": None}}
    for unit in ("PERCENT", "POINTS", "ELO"):
        for ceiling in (None, 9.5):
            yield {**doc, "metric": {**doc["metric"], "unit": unit}, "ceiling": ceiling}
    odd = copy.deepcopy(doc)
    odd["name"] = 'Ünïcode "quoted" \\ name\n\u2028 ✓'
    odd["metric"]["name"] = "<score> & \t"
    for number, entry in enumerate(odd["entries"]):
        entry["model_name"] = f'Modèl "{number}" \\ ☃'
        entry["source"] = None if number % 2 else f"sourcé {number % 3}"
        entry["published_on"] = None if number % 3 else Date("2026-11-30")
        entry["note"] = "a note, \u00e9" if number % 4 == 0 else None
        entry["setting"] = None if number % 5 else "5-shot"
        entry["standard_error"] = 0.25 if number % 2 else None
        entry["sample_size"] = 1000 + number if number % 3 == 1 else None
        entry["interval"] = {"low": 1.5, "high": 2.0, "level": 0.9} if number % 4 == 1 else None
        entry["reported_by"] = ("MODEL_DEVELOPER", "THIRD_PARTY", "SOMEONE", None)[number % 4]
        entry["score"] = number if number % 2 else number + 0.125
    yield odd
    twice = copy.deepcopy(doc)  # two rows of one model from one source: one record, two results
    twice["entries"] = [*twice["entries"], *copy.deepcopy(twice["entries"])]
    yield twice


async def test_spliced_lines_are_the_dicts_bytes(store: Store, tmp_path: Path) -> None:
    await with_tool_results(store, tmp_path)
    docs = await store.benchmarks()
    compared: list[Any] = []
    for doc in docs:
        for shape in [doc, *reshaped(doc)]:
            expected = dicts_written(shape)
            assert list(eee_benchmark_bytes(shape)) == expected, shape["slug"]
            compared.extend(expected)
    assert len(docs) > 10
    assert len(compared) > 500
    # Every shape was met: a record with two results, and one with each optional part.
    records = [orjson.loads(line) for line in compared]
    assert any(len(record["evaluation_results"]) > 1 for record in records)
    results = [result for record in records for result in record["evaluation_results"]]
    assert any("evaluation_timestamp" not in result for result in results)
    assert any("uncertainty" in result["score_details"] for result in results)
    assert any("source_organization_url" in record["source_metadata"] for record in records)
    assert any("source_organization_url" not in record["source_metadata"] for record in records)
