"""A release's manifest: what it holds, each file with its size and SHA-256 (the release's
id is derived from the manifest's own SHA-256)."""

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class ReleaseFile:
    name: str  # e.g. "almanac.ndjson", "almanac.eee.jsonl", "benchmarks/<slug>.csv"
    size: int  # bytes
    sha256: str  # hex
    media_type: str  # "application/x-ndjson", "application/jsonl", "text/csv"


@dataclass(frozen=True)
class ReleaseCounts:
    benchmarks: int
    models: int
    results: int  # leaderboard rows


@dataclass(frozen=True)
class Release:
    id: str  # e.g. "2026-12-02-1a2b3c4d5e6f"
    title: str
    created_at: datetime  # UTC
    cursor: str  # the change-log cursor it froze (changeCursor of the API)
    counts: ReleaseCounts
    files: tuple[ReleaseFile, ...]
