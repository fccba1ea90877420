"""The almanac out as Every Eval Ever 0.3.0 records: one a model per benchmark source (the
rows of one benchmark for one model from one source and reporter), read from the store a few
benchmarks at a time, so memory holds a batch whatever the almanac's size.

`evaluation_id` is derived from what the record is about (benchmark, model, source, reporter),
and `retrieved_timestamp` from when the leaderboard's latest read was recorded: the same data
gives the same records, byte for byte. The uncertainty and who reported each score are kept
(the reporter the almanac holds in `source_metadata.additional_details`, so that importing the
records gives it back).
"""

import hashlib
import json
from collections.abc import AsyncIterator, Iterator
from datetime import datetime
from typing import Any, TextIO

from interchange.eee import ALMANAC_DETAILS, KEPT_BENCHMARK, KEPT_REPORTER
from interchange.eee_schema import CURRENT
from store import BenchmarkDoc, Collection, EntryDoc, MetricUnit, Store

BATCH = 4
"""Benchmarks read at a time (each with its history: some tens of kilobytes)."""
ORGANIZATION = "Benchmark Almanac"
RELATIONSHIPS = {
    "MODEL_DEVELOPER": "first_party",
    "THIRD_PARTY": "third_party",
    "BENCHMARK_MAINTAINER": "third_party",
    "ALMANAC": "third_party",
}
"""Who reported a score, as Every Eval Ever's `evaluator_relationship` (a maintainer and the
almanac evaluate models they did not make)."""
UNIT_WORDS = {
    MetricUnit.PERCENT.name: "percent",
    MetricUnit.POINTS.name: "points",
    MetricUnit.ELO.name: "elo",
}
UNKNOWN = "unknown"


async def eee_records(store: Store) -> AsyncIterator[dict[str, Any]]:
    """Every record, benchmark by benchmark (by slug, as the store hands them out)."""
    async for batch in store.documents_in_batches(Collection.BENCHMARKS, BATCH):
        for doc in batch:
            for record in benchmark_records(doc):
                yield record


async def eee_lines(store: Store) -> AsyncIterator[str]:
    """The records as JSON Lines (`almanac.eee.jsonl`), each line ending in a newline."""
    async for batch in store.documents_in_batches(Collection.BENCHMARKS, BATCH):
        for doc in batch:
            for line in eee_benchmark_lines(doc):
                yield line


def eee_benchmark_lines(doc: BenchmarkDoc) -> Iterator[str]:
    """A benchmark's lines of `eee_lines` (a release makes them from the documents it reads)."""
    for record in benchmark_records(doc):
        yield json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"


async def write_eee(store: Store, out: TextIO) -> int:
    """Every record written to `out` as it is read; the number written."""
    count = 0
    async for line in eee_lines(store):
        out.write(line)
        count += 1
    return count


def benchmark_records(doc: BenchmarkDoc) -> Iterator[dict[str, Any]]:
    source = doc["source"]
    groups: dict[tuple[str, str, str], list[EntryDoc]] = {}
    for entry in doc["entries"]:
        named = entry["source"] or (source["name"] if source else UNKNOWN)
        key = (entry["model_name"], named, entry.get("reported_by") or "")
        groups.setdefault(key, []).append(entry)
    for (model_name, named, reported_by), entries in groups.items():
        yield _record(doc, model_name, named, reported_by, entries)


def _record(
    doc: BenchmarkDoc, model_name: str, named: str, reported_by: str, entries: list[EntryDoc]
) -> dict[str, Any]:
    source = doc["source"]
    reporter = reported_by or (source.get("kind") if source else None) or ""
    key = json.dumps([doc["slug"], model_name, named, reported_by], ensure_ascii=False)
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    metadata: dict[str, Any] = {
        "source_name": named,
        "source_type": "documentation",
        "source_organization_name": ORGANIZATION,
        "evaluator_relationship": RELATIONSHIPS.get(reporter, "other"),
        "additional_details": {KEPT_BENCHMARK: doc["slug"], KEPT_REPORTER: reported_by},
    }
    if source and source.get("url"):
        metadata["source_organization_url"] = source["url"]
    return {
        "schema_version": CURRENT,
        "evaluation_id": f"almanac/{doc['slug']}/{digest}",
        "retrieved_timestamp": _retrieved(doc),
        "source_metadata": metadata,
        "eval_library": {"name": UNKNOWN, "version": UNKNOWN},
        "model_info": {
            "name": model_name,
            "id": model_name,
            "additional_details": {"deployment_type": UNKNOWN, "model_availability": UNKNOWN},
        },
        "evaluation_results": [_result(doc, entry) for entry in entries],
    }


def _retrieved(doc: BenchmarkDoc) -> str:
    """When the leaderboard's latest read was recorded, in Unix seconds (as EEE asks)."""
    history = doc.get("history") or []
    stamp = history[-1]["recorded_at"] if history else doc["updated_at"]
    return str(int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()))


def _result(doc: BenchmarkDoc, entry: EntryDoc) -> dict[str, Any]:
    metric, source = doc["metric"], doc["source"]
    low, high = _range(metric["unit"], doc.get("ceiling"))
    data: dict[str, Any] = (
        {"dataset_name": doc["name"], "source_type": "url", "url": [source["url"]]}
        if source and source.get("url")
        else {"dataset_name": doc["name"], "source_type": "other"}
    )
    row: dict[str, Any] = dict(entry)
    details = {name: str(row[name]) for name in ALMANAC_DETAILS if row.get(name) is not None}
    result: dict[str, Any] = {
        "evaluation_name": doc["name"],
        "source_data": data,
        "metric_config": {
            "evaluation_description": metric["name"],
            "metric_name": metric["name"],
            "metric_unit": UNIT_WORDS.get(metric["unit"], metric["unit"].lower()),
            "lower_is_better": not metric["higher_is_better"],
            "score_type": "continuous",
            "min_score": low,
            "max_score": high,
        },
        "score_details": {"score": entry["score"], "details": details},
    }
    if entry.get("published_on"):
        result["evaluation_timestamp"] = entry["published_on"]
    if uncertainty := _uncertainty(entry):
        result["score_details"]["uncertainty"] = uncertainty
    return result


def _range(unit: str, ceiling: float | None) -> tuple[Any, Any]:
    if unit == MetricUnit.PERCENT.name:
        return 0.0, 100.0
    if unit == MetricUnit.ELO.name:
        return "-Infinity", "Infinity"
    return (0.0, ceiling) if ceiling is not None else (None, None)


def _uncertainty(entry: EntryDoc) -> dict[str, Any]:
    uncertainty: dict[str, Any] = {}
    if (standard_error := entry.get("standard_error")) is not None:
        uncertainty["standard_error"] = {"value": standard_error}
    if (interval := entry.get("interval")) is not None:
        uncertainty["confidence_interval"] = {
            "lower": interval["low"],
            "upper": interval["high"],
            "confidence_level": interval["level"],
        }
    if (sample_size := entry.get("sample_size")) is not None:
        uncertainty["num_samples"] = sample_size
    return uncertainty
