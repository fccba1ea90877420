"""A release's Croissant descriptor: the JSON-LD that machine-learning tools read a dataset by.

Croissant 1.0 (MLCommons, http://mlcommons.org/croissant/1.0; `mlcroissant validate` checks
it): a schema.org `Dataset` with the release's metadata (name, description, license, url,
citeAs, datePublished, identifier and version), its files as `cr:FileObject`s in
`distribution` (contentUrl, encodingFormat, contentSize, sha256), and `cr:RecordSet`s saying
what the files hold, each `cr:Field` sourced from a file's column. The leaderboards, one CSV a
benchmark, are one `cr:FileSet` (`benchmarks/*.csv`, beside the descriptor) and one record set,
the benchmark's slug taken from each file's name: mlcroissant reads it from a copy of the
release laid out as it is served (croissant.json beside benchmarks/), as it cannot list a web
folder; each file's FileObject gives its URL and hash. Pure: the release's manifest in, a dict out.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from releases.citation import bibtex
from releases.manifest import Release, ReleaseFile

CONFORMS_TO = "http://mlcommons.org/croissant/1.0"

# Croissant 1.0's standard @context, as its examples and mlcroissant write it (a descriptor
# with another context is read, with a warning).
CONTEXT: dict[str, Any] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}

NDJSON = "application/x-ndjson"
EEE_JSONL = "application/jsonl"
CSV = "text/csv"
JSON_LINES = "application/jsonlines"
ENCODINGS = {NDJSON: JSON_LINES, EEE_JSONL: JSON_LINES}
"""Croissant's names for the release's media types, where they differ: JSON Lines is
`application/jsonlines` to Croissant's readers (the files are served as NDJSON and JSONL)."""
LEADERBOARDS = "benchmarks/*.csv"
"""Where a release keeps its leaderboards, relative to the release (and its descriptor)."""
LEADERBOARD_FILES = "leaderboard-files"
"""The FileSet's id (a node's id is unique in the descriptor: the record set is `leaderboards`)."""


@dataclass(frozen=True)
class Column:
    """One column (or top-level key) of a release's file, as a record set's field."""

    name: str
    data_type: str  # a schema.org type: sc:Text, sc:Integer, sc:Float, sc:Boolean, sc:Date
    description: str


def _columns(*spec: tuple[str, str, str]) -> tuple[Column, ...]:
    return tuple(Column(name, kind, description) for name, kind, description in spec)


LEADERBOARD_COLUMNS = _columns(
    ("rank", "sc:Integer", "Position on the leaderboard, best first (ties keep distinct ranks)."),
    ("model", "sc:Text", "The model's name as the almanac prints it."),
    ("listed_as", "sc:Text", "The model's name as the source listed it."),
    ("tracked", "sc:Boolean", "Whether the almanac tracks the model."),
    ("score", "sc:Float", "The model's best score, in the benchmark's metric unit."),
    ("setting", "sc:Text", "The setting the score was read at."),
    ("source", "sc:Text", "Where the score was published."),
    ("published_on", "sc:Text", "When the score was published (RFC 3339 date), if known."),
    ("note", "sc:Text", "The almanac's note on the score."),
    ("read_on", "sc:Text", "When the almanac read the score (RFC 3339 date)."),
    ("interval_low", "sc:Float", "Low end of the score's interval, if known."),
    ("interval_high", "sc:Float", "High end of the score's interval, if known."),
    ("interval_level", "sc:Float", "The interval's confidence level (0.95)."),
    ("interval_computed", "sc:Boolean", "Whether the almanac computed the interval."),
    ("standard_error", "sc:Float", "The score's standard error, as published."),
    ("sample_size", "sc:Integer", "How many samples the score was computed on."),
    ("rank_best", "sc:Integer", "The best place the score could hold, given its interval."),
    ("rank_worst", "sc:Integer", "The worst place the score could hold, given its interval."),
    ("source_kind", "sc:Text", "Who reported the score (BENCHMARK_MAINTAINER, THIRD_PARTY...)."),
    ("self_reported", "sc:Boolean", "Whether the model's own lab reported the score."),
    ("released_after_test_set", "sc:Boolean", "Whether the model came after the test set."),
)
"""The columns of a release's leaderboard CSV: those of the leaderboard download."""

EEE_KEYS = _columns(
    ("schema_version", "sc:Text", "The Every Eval Ever schema version of the record (0.3.0)."),
    ("evaluation_id", "sc:Text", "The record's stable id: the same data gives the same id."),
    ("retrieved_timestamp", "sc:Text", "When the record was made (Unix time)."),
)
"""The scalar keys every Every Eval Ever 0.3.0 record has (its schema's required ones). The
others nest (model_info, source_metadata, evaluation_results): Croissant's readers take a JSON
Lines file's top-level keys as columns and cannot give an object as a field's value."""

DESCRIPTIONS = {
    NDJSON: "The whole almanac in its import format (benchmark-almanac/1): the first line "
    "holds the format, provenance and site figures; each other line one lab, category, model "
    "or benchmark with its reads, under its section's name (nested JSON, so no record set).",
    EEE_JSONL: "Every score as Every Eval Ever records (schema 0.3.0), one a line: one per "
    "model per benchmark source, with each score's uncertainty and who reported it.",
    CSV: "A benchmark's leaderboard as of the release (the site's leaderboard download).",
}


def descriptor(
    release: Release,
    base_url: str,
    license_url: str,
    site_name: str,
    *,
    leaderboard_columns: Sequence[Column] = LEADERBOARD_COLUMNS,
) -> dict[str, Any]:
    """The release's Croissant 1.0 descriptor (JSON-LD as a dict, ready for json.dumps).

    Each file of the manifest is a FileObject at `{base_url}/releases/{id}/{file}`; record sets
    describe the leaderboard CSVs (with `leaderboard_columns`) and the Every Eval Ever JSONL's
    ids, each only when the release holds such a file. The NDJSON nests too deep for a record
    set: its FileObject says what it holds.
    """
    home = f"{base_url.rstrip('/')}/releases/{release.id}"
    counts = release.counts
    return {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "name": f"{site_name}: {release.title}",
        "description": (
            f"{site_name}, frozen as release {release.id} at change-log cursor "
            f"{release.cursor}: {counts.benchmarks} benchmarks, {counts.models} models and "
            f"{counts.results} leaderboard rows. The files never change; each is listed "
            "with its SHA-256."
        ),
        "conformsTo": CONFORMS_TO,
        "citeAs": bibtex(release, base_url, site_name),
        "license": license_url,
        "url": home,
        "identifier": release.id,
        **_version(release.id),
        "datePublished": release.created_at.isoformat(),
        "creator": {"@type": "sc:Organization", "name": site_name, "url": base_url.rstrip("/")},
        "isLiveDataset": False,
        "distribution": [
            *(_file_object(home, file) for file in release.files),
            *_file_sets(release),
        ],
        "recordSet": _record_sets(release, leaderboard_columns),
    }


_DATED_ID = re.compile(r"^(\d{4})-(\d{2})-(\d{2})-([0-9A-Za-z]+)$")


def _version(release_id: str) -> dict[str, str]:
    """The id as Semantic Versioning, as Croissant asks a version to be: the date as
    MAJOR.MINOR.PATCH and the content hash as build metadata (2026-12-02-1a2b3c4d5e6f is
    2026.12.2+1a2b3c4d5e6f); none for an id of another shape (`identifier` has it as it is)."""
    found = _DATED_ID.match(release_id)
    if found is None:
        return {}
    year, month, day, digest = found.groups()
    return {"version": f"{int(year)}.{int(month)}.{int(day)}+{digest}"}


def _file_object(home: str, file: ReleaseFile) -> dict[str, Any]:
    described = (
        {"description": DESCRIPTIONS[file.media_type]} if file.media_type in DESCRIPTIONS else {}
    )
    return {
        "@type": "cr:FileObject",
        "@id": file.name,
        "name": file.name,
        **described,
        "contentUrl": f"{home}/{file.name}",
        "contentSize": f"{file.size} B",
        "encodingFormat": ENCODINGS.get(file.media_type, file.media_type),
        "sha256": file.sha256,
    }


def _leaderboards(release: Release) -> list[ReleaseFile]:
    return [
        file
        for file in release.files
        if file.media_type == CSV and file.name.startswith("benchmarks/")
    ]


def _first(release: Release, media_type: str) -> ReleaseFile | None:
    return next((file for file in release.files if file.media_type == media_type), None)


def _file_sets(release: Release) -> list[dict[str, Any]]:
    if not _leaderboards(release):
        return []
    return [
        {
            "@type": "cr:FileSet",
            "@id": LEADERBOARD_FILES,
            "name": LEADERBOARD_FILES,
            "description": "Every benchmark's leaderboard as of the release, one CSV each, "
            "named by the benchmark's slug (each is also a FileObject above, with its hash).",
            "encodingFormat": CSV,
            "includes": LEADERBOARDS,
        }
    ]


def _record_sets(release: Release, leaderboard_columns: Sequence[Column]) -> list[dict[str, Any]]:
    sets = []
    evaluations = _first(release, EEE_JSONL)
    if evaluations is not None:
        sets.append(
            _record_set(
                "evaluations",
                "The Every Eval Ever records' ids and versions, one a record.",
                {"fileObject": {"@id": evaluations.name}},
                EEE_KEYS,
            )
        )
    if _leaderboards(release):
        leaderboards = _record_set(
            "leaderboards",
            "Every leaderboard's rows: best score per model, with its rank range, interval "
            "and who reported it.",
            {"fileSet": {"@id": LEADERBOARD_FILES}},
            leaderboard_columns,
        )
        leaderboards["field"].insert(0, _benchmark_field())
        sets.append(leaderboards)
    return sets


def _record_set(
    name: str, description: str, origin: dict[str, Any], columns: Sequence[Column]
) -> dict[str, Any]:
    return {
        "@type": "cr:RecordSet",
        "@id": name,
        "name": name,
        "description": description,
        "field": [
            {
                "@type": "cr:Field",
                "@id": f"{name}/{column.name}",
                "name": column.name,
                "description": column.description,
                "dataType": column.data_type,
                "source": {**origin, "extract": {"column": column.name}},
            }
            for column in columns
        ],
    }


def _benchmark_field() -> dict[str, Any]:
    return {
        "@type": "cr:Field",
        "@id": "leaderboards/benchmark",
        "name": "benchmark",
        "description": "The benchmark's slug, from the file's name.",
        "dataType": "sc:Text",
        "source": {
            "fileSet": {"@id": LEADERBOARD_FILES},
            "extract": {"fileProperty": "filename"},
            "transform": {"regex": r"^(.*)\.csv$"},
        },
    }
