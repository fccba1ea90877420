"""What names a release: its manifest file (`manifest.json`: the date of its data, its counts,
each file with its size and SHA-256, in one canonical form), whose SHA-256 gives the id; and the
record a store keeps of it (the manifest's facts with its title, when it was made, the change-log
cursor it froze, and its tombstone once deleted)."""

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from releases.manifest import Release, ReleaseCounts, ReleaseFile

MANIFEST_FILE = "manifest.json"
MANIFEST_FORMAT = "benchmark-almanac-release/1"
ID_HEX_DIGITS = 12
JSON = "application/json"


@dataclass(frozen=True)
class Tombstone:
    """A deleted release: when, why, and by whom."""

    at: datetime
    why: str
    by: str | None = None


@dataclass(frozen=True)
class StoredRelease:
    release: Release
    sequence: int  # the change-log position its cursor names
    manifest: ReleaseFile  # the manifest file, which names the others (not among them)
    rows: Mapping[str, int] = field(default_factory=dict)
    """Each leaderboard CSV's rows, by file name (what a download of it is priced by)."""
    deleted: Tombstone | None = None


def manifest_bytes(date: str, counts: ReleaseCounts, files: tuple[ReleaseFile, ...]) -> bytes:
    """The manifest file: canonical JSON (keys sorted, files by name, no spaces), so that the
    same data gives the same bytes, and so the same id, wherever it is released."""
    document = {
        "format": MANIFEST_FORMAT,
        "date": date,
        "counts": _counts(counts),
        "files": [_file(file) for file in sorted(files, key=lambda file: file.name)],
    }
    return json.dumps(document, sort_keys=True, separators=(",", ":")).encode() + b"\n"


def manifest_file(manifest: bytes) -> ReleaseFile:
    return ReleaseFile(MANIFEST_FILE, len(manifest), hashlib.sha256(manifest).hexdigest(), JSON)


def release_id(date: str, manifest: bytes) -> str:
    """`YYYY-MM-DD-` and the first 12 hex digits of the manifest file's SHA-256: anyone holding
    a copy can check it."""
    return f"{date}-{hashlib.sha256(manifest).hexdigest()[:ID_HEX_DIGITS]}"


def record_of(stored: StoredRelease) -> dict[str, Any]:
    """What the store keeps (JSON)."""
    release, deleted = stored.release, stored.deleted
    return {
        "id": release.id,
        "title": release.title,
        "created_at": release.created_at.isoformat(),
        "cursor": release.cursor,
        "sequence": stored.sequence,
        "manifest": _file(stored.manifest),
        "rows": dict(stored.rows),
        "counts": _counts(release.counts),
        "files": [_file(file) for file in release.files],
        "deleted": None
        if deleted is None
        else {"at": deleted.at.isoformat(), "why": deleted.why, "by": deleted.by},
    }


def stored_of(record: dict[str, Any]) -> StoredRelease:
    """A record read back."""
    deleted = record.get("deleted")
    return StoredRelease(
        release=Release(
            id=record["id"],
            title=record["title"],
            created_at=datetime.fromisoformat(record["created_at"]),
            cursor=record["cursor"],
            counts=ReleaseCounts(**record["counts"]),
            files=tuple(ReleaseFile(**file) for file in record["files"]),
        ),
        sequence=record["sequence"],
        manifest=ReleaseFile(**record["manifest"]),
        rows=record["rows"],
        deleted=None
        if deleted is None
        else Tombstone(datetime.fromisoformat(deleted["at"]), deleted["why"], deleted.get("by")),
    )


def _counts(counts: ReleaseCounts) -> dict[str, int]:
    return {"benchmarks": counts.benchmarks, "models": counts.models, "results": counts.results}


def _file(file: ReleaseFile) -> dict[str, Any]:
    return {
        "name": file.name,
        "size": file.size,
        "sha256": file.sha256,
        "media_type": file.media_type,
    }
