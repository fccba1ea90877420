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
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import datetime
from json.encoder import encode_basestring
from typing import Any, Final, TextIO

import orjson

from interchange.eee import ALMANAC_DETAILS, KEPT_BENCHMARK, KEPT_REPORTER
from interchange.eee_schema import CURRENT
from store import BenchmarkDoc, Collection, EntryDoc, IntervalDoc, MetricUnit, Store

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
ID_PREFIX = "almanac/"
SORTED_DETAILS = sorted(ALMANAC_DETAILS)
"""A result's details in the order their keys sort in (`_score_details`)."""
# The same in every record (shared by them: records are only read, by the encoder).
EVAL_LIBRARY: Final = {"name": UNKNOWN, "version": UNKNOWN}
DEPLOYMENT: Final = {"deployment_type": UNKNOWN, "model_availability": UNKNOWN}


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
    """A benchmark's lines of `eee_lines`."""
    for line in eee_benchmark_bytes(doc):
        yield line.decode()


def eee_benchmark_bytes(doc: BenchmarkDoc) -> Iterator[bytes]:
    """A benchmark's lines of `eee_lines`, encoded (a release makes them from the documents it
    reads): the bytes orjson writes of `benchmark_records` (compact, keys sorted), a release's
    largest file (1 GB for the synthetic 10,000 benchmarks), made from `_Template`: what its
    records share written once a benchmark, each record's own parts spliced in."""
    template = _Template.of(_Common.of(doc))
    for (model_name, named, reported_by), entries in _groups(doc).items():
        yield template.record(model_name, named, reported_by, entries)


async def write_eee(store: Store, out: TextIO) -> int:
    """Every record written to `out` as it is read; the number written."""
    count = 0
    async for line in eee_lines(store):
        out.write(line)
        count += 1
    return count


def benchmark_records(doc: BenchmarkDoc) -> Iterator[dict[str, Any]]:
    common = _Common.of(doc)
    for (model_name, named, reported_by), entries in _groups(doc).items():
        yield _record(common, model_name, named, reported_by, entries)


def _groups(doc: BenchmarkDoc) -> dict[tuple[str, str, str], list[EntryDoc]]:
    """The benchmark's rows by what a record is about: (model, source, reporter)."""
    source = doc["source"]
    groups: dict[tuple[str, str, str], list[EntryDoc]] = {}
    for entry in doc["entries"]:
        named = entry["source"] or (source["name"] if source else UNKNOWN)
        key = (entry["model_name"], named, entry.get("reported_by") or "")
        groups.setdefault(key, []).append(entry)
    return groups


@dataclass(frozen=True, slots=True)
class _Common:
    """What every record and result of one benchmark shares, made once a benchmark (its
    records are some hundred; each result's parts are only read, never changed)."""

    slug: str
    name: str
    kind: str
    url: str | None
    retrieved: str
    source_data: dict[str, Any]
    metric_config: dict[str, Any]

    @classmethod
    def of(cls, doc: BenchmarkDoc) -> "_Common":
        metric, source = doc["metric"], doc["source"]
        url = source.get("url") if source else None
        low, high = _range(metric["unit"], doc.get("ceiling"))
        return cls(
            slug=doc["slug"],
            name=doc["name"],
            kind=(source.get("kind") if source else None) or "",
            url=url or None,
            retrieved=_retrieved(doc),
            source_data={"dataset_name": doc["name"], "source_type": "url", "url": [url]}
            if url
            else {"dataset_name": doc["name"], "source_type": "other"},
            metric_config={
                "evaluation_description": metric["name"],
                "metric_name": metric["name"],
                "metric_unit": UNIT_WORDS.get(metric["unit"], metric["unit"].lower()),
                "lower_is_better": not metric["higher_is_better"],
                "score_type": "continuous",
                "min_score": low,
                "max_score": high,
            },
        )


def evaluation_id(slug: str, model_name: str, named: str, reported_by: str) -> str:
    """What the record is about, hashed: the same data, the same id, in any run and store.
    The key is the JSON of the four (`json.dumps` of the list, as ids were first made), written
    by the encoder `json.dumps` itself uses for text: the ids stay as they were."""
    key = "[" + ", ".join(map(encode_basestring, (slug, model_name, named, reported_by))) + "]"
    return f"{ID_PREFIX}{slug}/{_digest(key).decode()}"


def _record(
    common: _Common, model_name: str, named: str, reported_by: str, entries: list[EntryDoc]
) -> dict[str, Any]:
    reporter = reported_by or common.kind
    metadata: dict[str, Any] = {
        "source_name": named,
        "source_type": "documentation",
        "source_organization_name": ORGANIZATION,
        "evaluator_relationship": RELATIONSHIPS.get(reporter, "other"),
        "additional_details": {KEPT_BENCHMARK: common.slug, KEPT_REPORTER: reported_by},
    }
    if common.url:
        metadata["source_organization_url"] = common.url
    return {
        "schema_version": CURRENT,
        "evaluation_id": evaluation_id(common.slug, model_name, named, reported_by),
        "retrieved_timestamp": common.retrieved,
        "source_metadata": metadata,
        "eval_library": EVAL_LIBRARY,
        "model_info": {"name": model_name, "id": model_name, "additional_details": DEPLOYMENT},
        "evaluation_results": [_result(common, entry) for entry in entries],
    }


SORTED = orjson.OPT_SORT_KEYS
RECORD_HEAD = b'{"eval_library":' + orjson.dumps(EVAL_LIBRARY, option=SORTED) + b',"evaluation_id":'
MODEL_HEAD = b'],"model_info":{"additional_details":' + orjson.dumps(DEPLOYMENT, option=SORTED)


@dataclass(frozen=True, slots=True)
class _Template:
    """A benchmark's records as the bytes orjson writes of `_record`'s dicts (compact, keys
    sorted: each key below is where OPT_SORT_KEYS puts it), the parts they all share written
    once a benchmark (a result's `source_data` and `metric_config` are most of its bytes), those
    of a source and reporter once each (`tails`), and each record's own spliced between: a
    fifth of the dicts' time, byte for byte the same (tests/interchange/test_eee_bytes.py)."""

    slug: str
    kind: str
    record_head: bytes
    id_key_head: str
    result_head: bytes
    result_middle: bytes
    result_tail: bytes
    after_model: bytes
    metadata_tail: bytes
    tails: dict[tuple[str, str], tuple[str, bytes]]
    """By (source, reporter): the end of `evaluation_id`'s key, and the record's bytes after
    its model (a benchmark's records come from a few sources and reporters)."""

    @classmethod
    def of(cls, common: _Common) -> "_Template":
        url = b"" if not common.url else b',"source_organization_url":' + orjson.dumps(common.url)
        return cls(
            slug=common.slug,
            kind=common.kind,
            # Up to the id's digest: `evaluation_id` is this text and 16 hex digits.
            record_head=RECORD_HEAD + orjson.dumps(f"{ID_PREFIX}{common.slug}/")[:-1],
            id_key_head="[" + encode_basestring(common.slug) + ", ",
            result_head=b'{"evaluation_name":' + orjson.dumps(common.name),
            result_middle=b',"metric_config":'
            + orjson.dumps(common.metric_config, option=SORTED)
            + b',"score_details":',
            result_tail=b',"source_data":' + orjson.dumps(common.source_data, option=SORTED) + b"}",
            after_model=b'},"retrieved_timestamp":'
            + orjson.dumps(common.retrieved)
            + b',"schema_version":'
            + orjson.dumps(CURRENT)
            + b',"source_metadata":{"additional_details":{'
            + orjson.dumps(KEPT_BENCHMARK)
            + b":"
            + orjson.dumps(common.slug)
            + b","
            + orjson.dumps(KEPT_REPORTER)
            + b":",
            metadata_tail=b',"source_organization_name":'
            + orjson.dumps(ORGANIZATION)
            + url
            + b',"source_type":"documentation"}}\n',
            tails={},
        )

    def record(
        self, model_name: str, named: str, reported_by: str, entries: list[EntryDoc]
    ) -> bytes:
        """`_record`'s line."""
        key_tail, tail = self.tails.get((named, reported_by)) or self._tail(named, reported_by)
        key = self.id_key_head + encode_basestring(model_name) + key_tail
        model = orjson.dumps(model_name)
        return b"".join(
            (
                self.record_head,
                _digest(key),
                b'","evaluation_results":[',
                self.result(entries[0])
                if len(entries) == 1
                else b",".join([self.result(entry) for entry in entries]),
                MODEL_HEAD,
                b',"id":',
                model,
                b',"name":',
                model,
                tail,
            )
        )

    def _tail(self, named: str, reported_by: str) -> tuple[str, bytes]:
        relationship = RELATIONSHIPS.get(reported_by or self.kind, "other")
        made = self.tails[named, reported_by] = (
            ", " + encode_basestring(named) + ", " + encode_basestring(reported_by) + "]",
            b"".join(
                (
                    self.after_model,
                    orjson.dumps(reported_by),
                    b'},"evaluator_relationship":',
                    orjson.dumps(relationship),
                    b',"source_name":',
                    orjson.dumps(named),
                    self.metadata_tail,
                )
            ),
        )
        return made

    def result(self, entry: EntryDoc) -> bytes:
        """`_result`'s JSON."""
        score_details = orjson.dumps(_score_details(entry))  # its keys come sorted
        if published := entry.get("published_on"):
            return b"".join(
                (
                    self.result_head,
                    b',"evaluation_timestamp":',
                    orjson.dumps(published),
                    self.result_middle,
                    score_details,
                    self.result_tail,
                )
            )
        return b"".join((self.result_head, self.result_middle, score_details, self.result_tail))


def _digest(key: str) -> bytes:
    """The 16 hex digits of `evaluation_id` whose key is `key`."""
    return hashlib.sha256(key.encode()).hexdigest()[:16].encode()


def _retrieved(doc: BenchmarkDoc) -> str:
    """When the leaderboard's latest read was recorded, in Unix seconds (as EEE asks)."""
    history = doc.get("history") or []
    stamp = history[-1]["recorded_at"] if history else doc["updated_at"]
    return str(int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()))


def _result(common: _Common, entry: EntryDoc) -> dict[str, Any]:
    result: dict[str, Any] = {
        "evaluation_name": common.name,
        "source_data": common.source_data,
        "metric_config": common.metric_config,
        "score_details": _score_details(entry),
    }
    if entry.get("published_on"):
        result["evaluation_timestamp"] = entry["published_on"]
    return result


def _score_details(entry: EntryDoc) -> dict[str, Any]:
    """A result's `score_details`, each dict's keys in sorted order (orjson keeps the order:
    the template writes it as it is, without sorting)."""
    details = {}  # a loop, not a comprehension: in Python 3.11 that is a function called
    for name in SORTED_DETAILS:
        if (value := entry.get(name)) is not None:
            details[name] = str(value)
    score_details: dict[str, Any] = {"details": details, "score": entry["score"]}
    interval = entry.get("interval")
    sample_size = entry.get("sample_size")
    standard_error = entry.get("standard_error")
    # Most rows say nothing of how uncertain they are: nothing more is made for them.
    if interval is not None or sample_size is not None or standard_error is not None:
        score_details["uncertainty"] = _uncertainty(interval, sample_size, standard_error)
    return score_details


def _range(unit: str, ceiling: float | None) -> tuple[Any, Any]:
    if unit == MetricUnit.PERCENT.name:
        return 0.0, 100.0
    if unit == MetricUnit.ELO.name:
        return "-Infinity", "Infinity"
    return (0.0, ceiling) if ceiling is not None else (None, None)


def _uncertainty(
    interval: IntervalDoc | None, sample_size: int | None, standard_error: float | None
) -> dict[str, Any]:
    uncertainty: dict[str, Any] = {}
    if interval is not None:
        uncertainty["confidence_interval"] = {
            "confidence_level": interval["level"],
            "lower": interval["low"],
            "upper": interval["high"],
        }
    if sample_size is not None:
        uncertainty["num_samples"] = sample_size
    if standard_error is not None:
        uncertainty["standard_error"] = {"value": standard_error}
    return uncertainty
