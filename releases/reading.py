"""Reading releases back: their records, their files as streams, one benchmark as a release
holds it; and deleting one, which leaves its tombstone."""

import json
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from releases.content import (
    MANIFEST_FILE,
    StoredRelease,
    Tombstone,
    record_of,
    stored_of,
)
from releases.making import NDJSON_FILE, ReleaseRefused
from releases.manifest import ReleaseFile
from store import ChangeReceipt, Store, announce_release, release_storage


async def stored_releases(store: Store) -> list[StoredRelease]:
    """Every release, the deleted ones too, newest first (then by id)."""
    found = [stored_of(record) for record in await release_storage(store).records()]
    found.sort(key=lambda stored: stored.release.id)
    found.sort(key=lambda stored: stored.release.created_at, reverse=True)
    return found


async def stored_release(store: Store, release_id: str) -> StoredRelease | None:
    try:
        record = await release_storage(store).record(release_id)
    except ValueError:  # not a name a release could have
        return None
    return None if record is None else stored_of(record)


def file_of(stored: StoredRelease, name: str) -> ReleaseFile | None:
    """The file of the release named `name` (its manifest's entry), if it holds one."""
    if name == MANIFEST_FILE:
        return stored.manifest
    return next((file for file in stored.release.files if file.name == name), None)


async def file_chunks(store: Store, stored: StoredRelease, name: str) -> AsyncIterator[bytes]:
    """The bytes of a file the release holds (`file_of`), as they are read."""
    chunks = await release_storage(store).chunks(stored.release.id, name)
    if chunks is None:
        raise LookupError(f"release {stored.release.id} has lost its file {name}")
    return chunks


async def delete_release(
    store: Store,
    release_id: str,
    why: str,
    by: str | None,
    *,
    now: datetime | None = None,
    receipt: ChangeReceipt | None = None,
) -> StoredRelease:
    """Delete the release's files, keeping its record with a tombstone (when, why, who), and
    announce it (the change noted in `receipt`). `ReleaseRefused` if there is no such release,
    or it is deleted already."""
    if not why.strip():
        raise ReleaseRefused("Say why the release is deleted: it is shown with its tombstone.")
    stored = await stored_release(store, release_id)
    if stored is None:
        raise ReleaseRefused(f"There is no release {release_id!r}.")
    if stored.deleted is not None:
        raise ReleaseRefused(f"Release {release_id} was deleted already.")
    buried = replace(stored, deleted=Tombstone(now or datetime.now(UTC), why.strip(), by))
    record = record_of(buried)
    await release_storage(store).bury(release_id, record)
    await announce_release(store, release_id, record, receipt)
    return buried


async def released_benchmark(
    store: Store, stored: StoredRelease, slug: str
) -> dict[str, Any] | None:
    """The benchmark `slug` as the release holds it (its item of the NDJSON export), read
    through the file a line at a time; None if the release does not hold it."""
    # Each benchmark's line begins so (editing's export writes the slug first).
    wanted = ('{"benchmarks": [{"slug": ' + json.dumps(slug, ensure_ascii=False) + ",").encode()
    pending = b""
    async for chunk in await file_chunks(store, stored, NDJSON_FILE):
        lines = (pending + chunk).split(b"\n")
        pending = lines.pop()
        for line in lines:
            if line.startswith(wanted):
                benchmark: dict[str, Any] = json.loads(line)["benchmarks"][0]
                return benchmark
    return None
