"""Releases people can cite: the almanac frozen at a change-log cursor into files that never
change (the NDJSON export, one CSV a leaderboard), listed in a manifest whose SHA-256 gives the
release its id; kept by the store (store.release_storage), deleted only to a tombstone.

Other packages import from here, never from the modules inside (import-linter checks it)."""

from releases.batch_files import BoardRules, ReadLeaderboards
from releases.content import MANIFEST_FILE, StoredRelease, Tombstone, release_id
from releases.leaderboards import (
    INTERVAL_ENDS,
    LEADERBOARD,
    UNCERTAINTY_COLUMNS,
    board_lines,
    csv_bytes,
    leaderboard_csv,
)
from releases.making import EEE_FILE, NDJSON_FILE, ReleaseRefused, make_release
from releases.manifest import Release, ReleaseCounts, ReleaseFile
from releases.reading import (
    delete_release,
    file_chunks,
    file_of,
    released_benchmark,
    stored_release,
    stored_releases,
)
from releases.rendering import (
    Rendered,
    Site,
    is_rendered,
    release_table,
    rendered,
    rendering_source,
)

__all__ = [
    "EEE_FILE",
    "INTERVAL_ENDS",
    "LEADERBOARD",
    "MANIFEST_FILE",
    "NDJSON_FILE",
    "UNCERTAINTY_COLUMNS",
    "BoardRules",
    "ReadLeaderboards",
    "Release",
    "ReleaseCounts",
    "ReleaseFile",
    "ReleaseRefused",
    "Rendered",
    "Site",
    "StoredRelease",
    "Tombstone",
    "board_lines",
    "csv_bytes",
    "delete_release",
    "file_chunks",
    "file_of",
    "is_rendered",
    "leaderboard_csv",
    "make_release",
    "release_id",
    "release_table",
    "released_benchmark",
    "rendered",
    "rendering_source",
    "stored_release",
    "stored_releases",
]
