"""Releases' files and records, streamed in and out, memory bounded whatever their size.

The embedded store keeps a release in its data directory, `releases/<id>/`: its files, and
`release.json` (its record). A release is staged in a directory of its own, each file written
there (a large one flushed to disk as it streams), the record last; everything is then flushed
to disk at once (`os.sync`: one call, where fsyncing 10,000 leaderboards' files one by one took
a minute), and the directory renamed to its id, in one step: a release is there whole, on disk,
or not at all. MongoDB keeps the files in
GridFS (bucket `releases`, named `<staging token>/<name>`) and the record in the `releases`
collection, written after every file (its insertion is the release appearing; a unique id
refuses a second).

A deleted release keeps its record, with a tombstone (`deleted`: when and why); its files go.
What a release holds is decided above (releases/): here, only bytes and records.
"""

import asyncio
import contextlib
import hashlib
import json
import os
import secrets
import shutil
from collections.abc import AsyncIterable, AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

from bson import ObjectId
from gridfs.errors import NoFile as GridFsNoFile
from motor.motor_asyncio import AsyncIOMotorGridFSBucket
from pymongo.errors import DuplicateKeyError

from store.changes import RELEASE_RECORD_PREFIX, ChangeReceipt
from store.interface import Store
from store.mongo import MongoStore
from store.queries import Collection
from store.sqlite import SqliteStore
from store.subjects import SITE
from store.views import underlying

CHUNK_BYTES = 256 * 1024
"""What a read of a release's file hands on at a time (and GridFS's chunk size)."""
RELEASES_DIR = "releases"
RECORD_FILE = "release.json"
BUCKET = "releases"
RECORDS = "releases"
RELEASES_READ = SITE
"""The subject a release's announcement changes (a site record): what a read of the releases
depends on."""


@dataclass(frozen=True)
class Written:
    """A file as a staging wrote it: its size, and its bytes' SHA-256 in hex."""

    size: int
    sha256: str

    @classmethod
    def of(cls, data: bytes) -> "Written":
        return cls(len(data), hashlib.sha256(data).hexdigest())


class _Hashing:
    """A streamed file's bytes counted and hashed as they pass (what `Written` says of them)."""

    def __init__(self) -> None:
        self.size, self.sha = 0, hashlib.sha256()

    def update(self, chunk: bytes) -> None:
        self.sha.update(chunk)
        self.size += len(chunk)

    def written(self) -> Written:
        return Written(self.size, self.sha.hexdigest())


class ReleaseStaging(Protocol):
    """A release being written: its files, then its record (`commit`), or nothing (`discard`).
    Each file is hashed as it is written (the embedded store: in the thread that writes it,
    where hashing leaves the event loop's core to the work that makes the bytes)."""

    async def put(self, name: str, chunks: AsyncIterable[bytes]) -> Written:
        """Write the file `name` (a relative path: `a/b.csv`) from `chunks`, as they come."""
        ...

    async def put_bytes(self, name: str, data: bytes) -> Written:
        """Write the file `name` holding `data` (a small file: one round trip)."""
        ...

    async def put_files(self, files: Sequence[tuple[str, bytes]]) -> list[Written]:
        """Write each small file (`name`, `data`), all in one step (a release's leaderboards:
        a batch of them in one hand-over to a thread, not one each)."""
        ...

    async def commit(self, release_id: str, record: dict[str, Any]) -> bool:
        """Make the release `release_id` appear, whole, with `record`; False (and nothing
        kept) if a release of that id is already stored."""
        ...

    async def discard(self) -> None: ...


class ReleaseStorage(Protocol):
    """The stored releases: their records, and their files as streams of bytes."""

    def staging(self) -> ReleaseStaging: ...
    async def record(self, release_id: str) -> dict[str, Any] | None: ...
    async def records(self) -> list[dict[str, Any]]:
        """Every release's record (the deleted ones' too), in no order."""
        ...

    async def chunks(self, release_id: str, name: str) -> AsyncIterator[bytes] | None:
        """The file's bytes, `CHUNK_BYTES` at a time; None if the release holds no such file."""
        ...

    async def bury(self, release_id: str, record: dict[str, Any]) -> bool:
        """Replace the release's record with `record` (its tombstone) and delete its files;
        False if there is no such release."""
        ...


def release_storage(store: Store) -> ReleaseStorage:
    """Where `store` keeps its releases (beneath any view of it)."""
    found = underlying(store)
    if isinstance(found, SqliteStore):
        return FileReleases(found.path.parent / RELEASES_DIR)
    if isinstance(found, MongoStore):
        return GridFsReleases(found.db)
    raise TypeError(f"no release storage for {type(found).__name__}")


async def announce_release(
    store: Store, release_id: str, record: dict[str, Any], receipt: ChangeReceipt | None = None
) -> bool:
    """Log the release's appearing, or its deletion (a record with `deleted`), as a change of
    its own kind (store.changes): a site record per release, written through the one write
    path, the change noted in `receipt` (a mutation's `changeCursor`). False if it was already
    announced so."""
    key = {"_id": RELEASE_RECORD_PREFIX + release_id}
    said = {"release": release_id, "deleted": record.get("deleted") is not None}
    return await store.replace(Collection.SITE, key, said, receipt=receipt) != "unchanged"


def _safe(name: str) -> PurePosixPath:
    path = PurePosixPath(name)
    if path.is_absolute() or not path.parts or any(part in ("", ".", "..") for part in path.parts):
        raise ValueError(f"not a release file's name: {name!r}")
    return path


# The embedded store: a directory a release.


def _write_atomically(path: Path, data: bytes) -> None:
    partial = path.with_name(f".{path.name}.part")
    with partial.open("wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())
    partial.replace(path)


def _fsync_directory(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


WRITTEN_BACK_BYTES = 8 * 1024 * 1024
"""A streamed file's bytes are flushed to disk and dropped from the page cache every this many
(`_WrittenBack`)."""
_flush = getattr(os, "fdatasync", os.fsync)  # the data, not the times (macOS: fsync)
DROP_CACHED: int | None = getattr(os, "POSIX_FADV_DONTNEED", None)


class _WrittenBack:
    """A large file written as it streams, its bytes flushed to disk and dropped from the page
    cache every WRITTEN_BACK_BYTES: a release's gigabytes do not push the database's pages out
    of the cache, the final `os.sync` has little left to write, and the next chunks reuse the
    pages just dropped (on this project's VMs a page the cache takes fresh costs the kernel 3 s
    of system time a GB written, a reused one 0.4 s: docs/performance.md)."""

    def __init__(self, descriptor: int) -> None:
        self.descriptor = descriptor
        self.flushed = 0
        self.hashing = _Hashing()

    @classmethod
    def open(cls, path: Path) -> "_WrittenBack":
        return cls(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644))

    def write(self, chunk: bytes) -> None:
        """The chunk written and hashed (hashlib lets go of the GIL for a chunk this size)."""
        self.hashing.update(chunk)
        view = memoryview(chunk)
        while view:
            view = view[os.write(self.descriptor, view) :]
        if self.hashing.size - self.flushed >= WRITTEN_BACK_BYTES:
            self._write_back()

    def _write_back(self) -> None:
        _flush(self.descriptor)
        written = self.hashing.size
        if DROP_CACHED is not None:  # not on macOS: the pages stay cached
            os.posix_fadvise(self.descriptor, self.flushed, written - self.flushed, DROP_CACHED)
        self.flushed = written

    def close(self) -> None:
        os.close(self.descriptor)

    def done(self) -> Written:
        return self.hashing.written()


class FileStaging:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.directory = root / f".staging-{secrets.token_hex(8)}"

    async def put(self, name: str, chunks: AsyncIterable[bytes]) -> Written:
        target = self.directory / _safe(name)
        await asyncio.to_thread(target.parent.mkdir, parents=True, exist_ok=True)
        out = await asyncio.to_thread(_WrittenBack.open, target)
        try:
            async for chunk in chunks:
                await asyncio.to_thread(out.write, chunk)
        finally:
            await asyncio.to_thread(out.close)
        return out.done()

    async def put_bytes(self, name: str, data: bytes) -> Written:
        [written] = await self.put_files([(name, data)])
        return written

    async def put_files(self, files: Sequence[tuple[str, bytes]]) -> list[Written]:
        targets = [(self.directory / _safe(name), data) for name, data in files]

        def write() -> list[Written]:
            folders = {target.parent for target, _ in targets}  # a batch's are mostly one
            for folder in folders:
                folder.mkdir(parents=True, exist_ok=True)
            for target, data in targets:
                target.write_bytes(data)
            return [Written.of(data) for _, data in targets]

        return await asyncio.to_thread(write)

    async def commit(self, release_id: str, record: dict[str, Any]) -> bool:
        target = self.root / _safe(release_id)

        def move() -> bool:
            self.directory.mkdir(parents=True, exist_ok=True)
            (self.directory / RECORD_FILE).write_bytes(_encoded(record))
            os.sync()  # every file staged (and its directory entry) on disk before it appears
            if target.exists():
                return False
            self.directory.rename(target)  # the release appears whole, in one step
            _fsync_directory(self.root)
            return True

        moved = await asyncio.to_thread(move)
        if not moved:
            await self.discard()
        return moved

    async def discard(self) -> None:
        await asyncio.to_thread(shutil.rmtree, self.directory, True)


class FileReleases:
    """Releases in a directory of the embedded store's data directory."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def staging(self) -> FileStaging:
        return FileStaging(self.root)

    async def record(self, release_id: str) -> dict[str, Any] | None:
        path = self.root / _safe(release_id) / RECORD_FILE

        def read() -> dict[str, Any] | None:
            try:
                return json.loads(path.read_bytes())  # type: ignore[no-any-return]
            except FileNotFoundError:
                return None

        return await asyncio.to_thread(read)

    async def records(self) -> list[dict[str, Any]]:
        def read() -> list[dict[str, Any]]:
            if not self.root.is_dir():
                return []
            found = []
            for directory in self.root.iterdir():
                path = directory / RECORD_FILE
                if not directory.name.startswith(".") and path.is_file():
                    found.append(json.loads(path.read_bytes()))
            return found

        return await asyncio.to_thread(read)

    async def chunks(self, release_id: str, name: str) -> AsyncIterator[bytes] | None:
        path = self.root / _safe(release_id) / _safe(name)
        try:
            opened = await asyncio.to_thread(path.open, "rb")
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None

        async def read() -> AsyncIterator[bytes]:
            try:
                while chunk := await asyncio.to_thread(opened.read, CHUNK_BYTES):
                    yield chunk
            finally:
                opened.close()

        return read()

    async def bury(self, release_id: str, record: dict[str, Any]) -> bool:
        directory = self.root / _safe(release_id)

        def write() -> bool:
            if not (directory / RECORD_FILE).is_file():
                return False
            _write_atomically(directory / RECORD_FILE, _encoded(record))  # gone, first
            for entry in directory.iterdir():
                if entry.name != RECORD_FILE:
                    shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
            return True

        return await asyncio.to_thread(write)


def _encoded(record: dict[str, Any]) -> bytes:
    return json.dumps(record, ensure_ascii=False, sort_keys=True).encode()


# MongoDB: GridFS for the files, a collection for the records.


class GridFsStaging:
    def __init__(self, db: Any, bucket: AsyncIOMotorGridFSBucket) -> None:
        self.db = db
        self.bucket = bucket
        self.token = secrets.token_hex(8)

    async def put(self, name: str, chunks: AsyncIterable[bytes]) -> Written:
        upload = self.bucket.open_upload_stream_with_id(
            ObjectId(), f"{self.token}/{_safe(name)}", metadata={"staging": self.token}
        )
        hashing = _Hashing()
        try:
            async for chunk in chunks:
                hashing.update(chunk)
                await upload.write(chunk)
        except BaseException:
            await upload.abort()
            raise
        await upload.close()
        return hashing.written()

    async def put_bytes(self, name: str, data: bytes) -> Written:
        await self.bucket.upload_from_stream_with_id(
            ObjectId(), f"{self.token}/{_safe(name)}", data, metadata={"staging": self.token}
        )
        return Written.of(data)

    async def put_files(self, files: Sequence[tuple[str, bytes]]) -> list[Written]:
        return [await self.put_bytes(name, data) for name, data in files]

    async def commit(self, release_id: str, record: dict[str, Any]) -> bool:
        try:
            await self.db[RECORDS].insert_one(
                {"_id": release_id, "token": self.token, "record": record}
            )
        except DuplicateKeyError:
            await self.discard()
            return False
        return True

    async def discard(self) -> None:
        await _delete_files(self.db, self.bucket, self.token)


async def _delete_files(db: Any, bucket: AsyncIOMotorGridFSBucket, token: str) -> None:
    # The files collection queried as such: mongomock's GridFS has no `find` of its own.
    async for found in db[f"{BUCKET}.files"].find({"metadata.staging": token}, {"_id": 1}):
        with contextlib.suppress(GridFsNoFile):
            await bucket.delete(found["_id"])


class GridFsReleases:
    """Releases in MongoDB: files in GridFS, records in a collection."""

    def __init__(self, db: Any) -> None:
        self.db = db
        self.bucket = AsyncIOMotorGridFSBucket(db, bucket_name=BUCKET, chunk_size_bytes=CHUNK_BYTES)

    def staging(self) -> GridFsStaging:
        return GridFsStaging(self.db, self.bucket)

    async def record(self, release_id: str) -> dict[str, Any] | None:
        found = await self.db[RECORDS].find_one({"_id": release_id})
        return None if found is None else found["record"]

    async def records(self) -> list[dict[str, Any]]:
        return [doc["record"] async for doc in self.db[RECORDS].find({}, {"record": 1})]

    async def chunks(self, release_id: str, name: str) -> AsyncIterator[bytes] | None:
        found = await self.db[RECORDS].find_one({"_id": release_id}, {"token": 1})
        if found is None:
            return None
        try:
            download = await self.bucket.open_download_stream_by_name(
                f"{found['token']}/{_safe(name)}"
            )
        except GridFsNoFile:
            return None

        async def read() -> AsyncIterator[bytes]:
            try:
                while chunk := await download.readchunk():
                    yield chunk
            finally:
                download.close()

        return read()

    async def bury(self, release_id: str, record: dict[str, Any]) -> bool:
        found = await self.db[RECORDS].find_one_and_update(
            {"_id": release_id}, {"$set": {"record": record}}
        )
        if found is None:
            return False
        await _delete_files(self.db, self.bucket, found["token"])
        return True
