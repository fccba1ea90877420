"""Making a release: the almanac frozen at the change-log cursor into files written as they are
read (the NDJSON export, Every Eval Ever JSONL (interchange/), one CSV a leaderboard), hashed
by the store as it writes them, then named by its manifest's SHA-256. The store is read once:
each batch of benchmark documents makes its NDJSON lines, its records and its leaderboards (a
pass a file read every document three times); a large almanac's records and leaderboards are
made by a process of their own meanwhile (releases/batch_files.py).

Memory holds the tracked models (the curated list, read once), two batches of documents, a few
chunks of each file, and a line of the manifest a file, whatever the almanac's size. The id's
date is the data's own (the newest date its reads carry: when a read was taken or recorded),
not the clock's: the same data released on two days, or in two data directories, gets the same
id.
"""

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from editing import exported_benchmark, exported_head
from releases.batch_files import PROCESS_FROM, BatchWriter, ReadLeaderboards, files_maker
from releases.content import (
    MANIFEST_FILE,
    StoredRelease,
    manifest_bytes,
    manifest_file,
    record_of,
    release_id,
    stored_of,
)
from releases.manifest import Release, ReleaseCounts, ReleaseFile
from store import (
    ChangeReceipt,
    Collection,
    ReleaseStaging,
    Store,
    announce_release,
    release_storage,
)

NDJSON_FILE = "almanac.ndjson"
EEE_FILE = "almanac.eee.jsonl"
NDJSON = "application/x-ndjson"
JSONL = "application/jsonl"
BATCH = 10
"""Benchmarks read a round trip, each with its history (memory holds two such batches), and
their leaderboards computed together."""
QUEUED_CHUNKS = 2
"""Chunks of a file made and not yet written (the pass over the store waits beyond)."""
CHUNK_BYTES = 1024 * 1024
"""Lines are handed to the store this many bytes at a time, each chunk written in a thread: a MB
a hand-over keeps their cost small (a release of 10,000 benchmarks writes some 1.6 GB)."""


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


async def make_release(
    store: Store,
    title: str,
    read_leaderboards: ReadLeaderboards,
    cursor_of: Callable[[int], str],
    *,
    now: datetime | None = None,
    receipt: ChangeReceipt | None = None,
    process_from: int = PROCESS_FROM,
) -> tuple[StoredRelease, bool]:
    """The almanac as it is now, released under `title` (`read_leaderboards`: what reads the rules
    each leaderboard's CSV is made by, as the page's rows are; `cursor_of`: the API's cursor of a
    change-log position), and whether it was made now: False if this very data was released already
    (that release, unchanged: its title and date stay). `ReleaseRefused` if the almanac holds no
    read, or its release was deleted. The change announcing it is noted in `receipt`. An almanac of
    `process_from` benchmarks or more has its records and leaderboards made by a process of
    their own (releases/batch_files.py)."""
    if not title.strip():
        raise ReleaseRefused("A release needs a title.")
    storage = release_storage(store)
    _, sequence = await store.change_bounds()  # before any document is read: all in it is in
    staging = storage.staging()
    try:
        tally = Tally()
        files, rows = await _written(store, staging, tally, read_leaderboards, process_from)
        if not tally.newest:
            raise ReleaseRefused("The almanac holds no leaderboard read: nothing to release.")
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
    await announce_release(store, ident, record, receipt)
    return stored_of(record), made


class Stream:
    """A file's lines, made by the one pass over the store, handed to its writer in chunks of
    some CHUNK_BYTES (a few queued: the pass waits for a slow writer); its size and SHA-256 as
    the store wrote it."""

    def __init__(self, name: str, media_type: str) -> None:
        self.name, self.media_type = name, media_type
        self.file: ReleaseFile | None = None
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue(QUEUED_CHUNKS)
        self.held: list[bytes] = []
        self.size = 0

    async def add(self, lines: list[bytes]) -> None:
        """The lines (encoded, each ending in a newline) added, a chunk handed on once full
        (a benchmark's lines are added at once: a chunk may pass CHUNK_BYTES by as many)."""
        self.held += lines
        self.size += sum(map(len, lines))
        if self.size >= CHUNK_BYTES:
            await self.queue.put(b"".join(self.held))
            self.held, self.size = [], 0

    async def close(self) -> None:
        if self.held:
            await self.queue.put(b"".join(self.held))
        await self.queue.put(None)

    async def chunks(self) -> AsyncIterator[bytes]:
        while (chunk := await self.queue.get()) is not None:
            yield chunk

    async def written(self, staging: ReleaseStaging) -> None:
        written = await staging.put(self.name, self.chunks())
        self.file = ReleaseFile(self.name, written.size, written.sha256, self.media_type)


async def _written(
    store: Store,
    staging: ReleaseStaging,
    tally: Tally,
    read_leaderboards: ReadLeaderboards,
    process_from: int,
) -> tuple[list[ReleaseFile], dict[str, int]]:
    """Every file staged from one pass over the store: the NDJSON export (byte for byte as
    `almanac export FILE.ndjson` writes it) streamed as the documents are read, and each
    batch's Every Eval Ever lines (as `/export.eee.jsonl` serves them) and leaderboards made
    from the same documents (by a process of their own if the almanac holds `process_from`
    benchmarks or more). The files in the manifest's order (the NDJSON, the JSONL, the CSVs by
    benchmark), and the rows of each CSV, by file name."""
    rules = await read_leaderboards()
    by_process = (await store.item_counts()).benchmarks >= process_from
    async with files_maker(rules, by_process) as make_files:
        ndjson, eee = Stream(NDJSON_FILE, NDJSON), Stream(EEE_FILE, JSONL)
        batches = BatchWriter(make_files, eee.add)

        async def read() -> None:
            async for line in exported_head(store):
                tally.see(line)
                await ndjson.add([_ndjson_line(line)])
            # The next batch is read while this one is made into lines (and handed on).
            async for batch in _read_ahead(
                store.documents_in_batches(Collection.BENCHMARKS, BATCH)
            ):
                await batches.add(batch)
                for doc in batch:
                    line = exported_benchmark(doc)
                    tally.see(line)
                    await ndjson.add([_ndjson_line(line)])
            await ndjson.close()
            await batches.close()

        async def batches_written() -> None:
            await batches.written(staging)
            await eee.close()

        await _together(read(), ndjson.written(staging), eee.written(staging), batches_written())
    assert ndjson.file is not None  # each written whole
    assert eee.file is not None
    return [ndjson.file, eee.file, *batches.boards], batches.rows


def _ndjson_line(line: dict[str, Any]) -> bytes:
    """A line of the NDJSON export, as `almanac export FILE.ndjson` writes it."""
    return (json.dumps(line, ensure_ascii=False) + "\n").encode()


async def _read_ahead(batches: AsyncIterator[list[Any]]) -> AsyncIterator[list[Any]]:
    """`batches`, the next one read while the one handed out is used (the store's round trip
    overlaps the lines' making)."""
    reading = asyncio.ensure_future(anext(batches, None))
    try:
        while (batch := await reading) is not None:
            reading = asyncio.ensure_future(anext(batches, None))
            yield batch
    finally:
        reading.cancel()


async def _together(*steps: Awaitable[None]) -> None:
    """The steps run at once; on the first failure the others are cancelled and it is raised
    as it is (not in an exception group)."""
    tasks = [asyncio.ensure_future(step) for step in steps]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
