"""A release's files as a store stages them, on both stores: a file streamed in uneven chunks,
over several of the embedded store's write-backs (flushed to disk and dropped from the page
cache every WRITTEN_BACK_BYTES), reads back byte for byte once committed, and the size and
SHA-256 each put reports are those of the bytes given."""

import hashlib
from collections.abc import AsyncIterator

import pytest

from store import Store, Written, release_storage
from store.releases import WRITTEN_BACK_BYTES

RELEASE = "2026-12-03-000000000000"
pytestmark = pytest.mark.usefixtures("gridfs_on_mongomock")


def streamed_bytes() -> bytes:
    """Two and a half write-backs of bytes that differ everywhere (a digest chain)."""
    blocks: list[bytes] = []
    block = b"almanac"
    while len(blocks) * 32 * 1024 < WRITTEN_BACK_BYTES * 5 // 2:
        block = hashlib.sha512(block).digest() * 512  # 32 kB
        blocks.append(block)
    return b"".join(blocks) + b"tail"


async def uneven(data: bytes) -> AsyncIterator[bytes]:
    """The bytes in chunks of 1 byte to some 3 MB, none on a write-back's edge."""
    start, size = 0, 1
    while start < len(data):
        yield data[start : start + size]
        start, size = start + size, size * 7 + 3


async def test_staged_files_read_back_as_written(store: Store) -> None:
    storage = release_storage(store)
    staging = storage.staging()
    data = streamed_bytes()
    streamed = await staging.put("almanac.bin", uneven(data))
    small = await staging.put_files([("benchmarks/a.csv", b"rank\r\n1\r\n"), ("empty.csv", b"")])
    alone = await staging.put_bytes("manifest.json", b"{}\n")
    assert streamed == Written(len(data), hashlib.sha256(data).hexdigest())
    assert small == [Written.of(b"rank\r\n1\r\n"), Written(0, hashlib.sha256(b"").hexdigest())]
    assert alone == Written(3, hashlib.sha256(b"{}\n").hexdigest())
    assert await staging.commit(RELEASE, {"id": RELEASE})
    for name, expected in [
        ("almanac.bin", data),
        ("benchmarks/a.csv", b"rank\r\n1\r\n"),
        ("empty.csv", b""),
        ("manifest.json", b"{}\n"),
    ]:
        chunks = await storage.chunks(RELEASE, name)
        assert chunks is not None, name
        assert b"".join([chunk async for chunk in chunks]) == expected, name
