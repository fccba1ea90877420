"""Making a release: the almanac frozen at the change-log cursor into files written as they are
read (the NDJSON export, Every Eval Ever JSONL (interchange/), one CSV a
leaderboard), hashed as they stream, then named by its manifest's SHA-256.

Memory holds a chunk of a file, one leaderboard, and a line of the manifest a file, whatever
the almanac's size. The id's date is the data's own (the newest date its reads carry: when a
read was taken or recorded), not the clock's: the same data released on two days, or in two
data directories, gets the same id.
"""

import asyncio
import hashlib
import json
from collections.abc import AsyncIterable, AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from editing import exported_lines
from interchange import eee_lines
from releases.content import (
    MANIFEST_FILE,
    StoredRelease,
    manifest_bytes,
    manifest_file,
    record_of,
    release_id,
    stored_of,
)
from releases.leaderboards import ReadLeaderboards, leaderboard_csv
from releases.manifest import Release, ReleaseCounts, ReleaseFile
from store import ReleaseStaging, Store, announce_release, release_storage

NDJSON_FILE = "almanac.ndjson"
EEE_FILE = "almanac.eee.jsonl"
NDJSON = "application/x-ndjson"
JSONL = "application/jsonl"
CSV = "text/csv"
LEADERBOARDS_AT_ONCE = 10
"""Leaderboards read a round trip (memory holds two such batches, each with its history)."""
CHUNK_BYTES = 256 * 1024
"""Lines are handed to the store this many bytes at a time (fewer round trips)."""


class ReleaseRefused(Exception):
    """No release can be made, or removed: the message says why."""


@dataclass
class Tally:
    """What the NDJSON pass saw: the benchmarks (each then written as CSV), models, and the
    newest date the data carries."""

    benchmarks: list[str] = field(default_factory=list)
    models: int = 0
    newest: str = ""

    def see(self, line: dict[str, Any]) -> None:
        self.models += len(line.get("models", []))
        for benchmark in line.get("benchmarks", []):
            self.benchmarks.append(benchmark["slug"])
            for read in benchmark["reads"]:
                recorded = read.get("recorded_at") or ""
                self.newest = max(self.newest, str(read["read_on"]), str(recorded)[:10])


class Hashed:
    """A file's bytes counted and hashed as they pass on to the store."""

    def __init__(self, name: str, media_type: str) -> None:
        self.name, self.media_type = name, media_type
        self.size, self.sha = 0, hashlib.sha256()

    async def through(self, chunks: AsyncIterable[bytes]) -> AsyncIterator[bytes]:
        async for chunk in chunks:
            self.size += len(chunk)
            self.sha.update(chunk)
            yield chunk

    def file(self) -> ReleaseFile:
        return ReleaseFile(self.name, self.size, self.sha.hexdigest(), self.media_type)


async def make_release(
    store: Store,
    title: str,
    read_leaderboards: ReadLeaderboards,
    cursor_of: Callable[[int], str],
    *,
    now: datetime | None = None,
) -> tuple[StoredRelease, bool]:
    """The almanac as it is now, released under `title` (`read_leaderboards`: each
    leaderboard as the page's query answers it; `cursor_of`: the API's cursor of a
    change-log position), and whether it was made now: False if this very data was released
    already (that release, unchanged: its title and date stay). `ReleaseRefused` if the almanac
    holds no read, or its release was deleted."""
    if not title.strip():
        raise ReleaseRefused("A release needs a title.")
    storage = release_storage(store)
    _, sequence = await store.change_bounds()  # before any document is read: all in it is in
    staging = storage.staging()
    try:
        tally, files = Tally(), []
        ndjson = Hashed(NDJSON_FILE, NDJSON)
        await staging.put(NDJSON_FILE, ndjson.through(_ndjson(store, tally)))
        files.append(ndjson.file())
        eee = Hashed(EEE_FILE, JSONL)
        await staging.put(EEE_FILE, eee.through(every_eval_ever_chunks(store)))
        files.append(eee.file())
        if not tally.newest:
            raise ReleaseRefused("The almanac holds no leaderboard read: nothing to release.")
        rows = await _leaderboards(staging, tally.benchmarks, read_leaderboards, files)
        counts = ReleaseCounts(len(tally.benchmarks), tally.models, sum(rows.values()))
        manifest = manifest_bytes(tally.newest, counts, tuple(files))
        await staging.put_bytes(MANIFEST_FILE, manifest)
        ident = release_id(tally.newest, manifest)
        made_at = now or datetime.now(UTC)
        release = Release(ident, title.strip(), made_at, cursor_of(sequence), counts, tuple(files))
        record = record_of(StoredRelease(release, sequence, manifest_file(manifest), rows))
        made = await staging.commit(ident, record)
    except BaseException:
        await staging.discard()
        raise
    if not made:
        found = await storage.record(ident)
        assert found is not None  # a release is never removed, only buried
        stored = stored_of(found)
        if stored.deleted is not None:
            raise ReleaseRefused(
                f"This data was released as {ident}, deleted on "
                f"{stored.deleted.at.date().isoformat()} ({stored.deleted.why}): change the "
                "data to release it anew."
            )
        record = found
    # Announced after it is stored; again on a second try, if a crash came between (a no-op
    # once it is announced).
    await announce_release(store, ident, record)
    return stored_of(record), made


async def every_eval_ever_chunks(store: Store) -> AsyncIterator[bytes]:
    """The almanac as Every Eval Ever JSONL (`almanac.eee.jsonl`: what `/export.eee.jsonl`
    serves), streamed in chunks of some CHUNK_BYTES."""
    chunk: list[bytes] = []
    held = 0
    async for line in eee_lines(store):
        encoded = line.encode()
        chunk.append(encoded)
        held += len(encoded)
        if held >= CHUNK_BYTES:
            yield b"".join(chunk)
            chunk, held = [], 0
    if chunk:
        yield b"".join(chunk)


async def _leaderboards(
    staging: ReleaseStaging,
    slugs: list[str],
    read_leaderboards: ReadLeaderboards,
    files: list[ReleaseFile],
) -> dict[str, int]:
    """Each leaderboard's CSV staged and listed in `files`; the rows of each, by file name."""
    rows: dict[str, int] = {}
    batches = [
        slugs[start : start + LEADERBOARDS_AT_ONCE]
        for start in range(0, len(slugs), LEADERBOARDS_AT_ONCE)
    ]
    # The next batch is read while this one is written: the store's reads overlap the files'.
    reading = asyncio.ensure_future(read_leaderboards(batches[0])) if batches else None
    try:
        for at, batch in enumerate(batches):
            assert reading is not None
            answers = await reading
            reading = None
            if at + 1 < len(batches):
                reading = asyncio.ensure_future(read_leaderboards(batches[at + 1]))
            for slug in batch:
                if (benchmark := answers.get(slug)) is None:  # deleted since the NDJSON pass
                    continue
                data, name = leaderboard_csv(benchmark), f"benchmarks/{slug}.csv"
                rows[name] = len(benchmark["leaderboard"])
                await staging.put_bytes(name, data)
                files.append(ReleaseFile(name, len(data), hashlib.sha256(data).hexdigest(), CSV))
    finally:
        if reading is not None:
            reading.cancel()
    return rows


async def _ndjson(store: Store, tally: Tally) -> AsyncIterator[bytes]:
    """The NDJSON export, byte for byte as `almanac export FILE.ndjson` writes it, in chunks."""
    buffer: list[bytes] = []
    held = 0
    async for line in exported_lines(store):
        tally.see(line)
        encoded = (json.dumps(line, ensure_ascii=False) + "\n").encode()
        buffer.append(encoded)
        held += len(encoded)
        if held >= CHUNK_BYTES:
            yield b"".join(buffer)
            buffer, held = [], 0
    if buffer:
        yield b"".join(buffer)
