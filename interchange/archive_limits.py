"""What an Inspect `.eval` archive unpacks to, measured before Inspect reads it. Inspect's reader
decompresses a member whole, whatever size the archive declares for it, so a small archive (a
zip bomb: 100 KB of deflated spaces is 100 MB) would take the server's memory; here each member
a header read opens is decompressed as a stream, counted, and given up past the limit."""

import io
import struct
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path

MAX_UNPACKED_BYTES = 64 * 1024 * 1024
"""The most the members a header read opens may unpack to, together: a log's header and journal
are some kilobytes to a few megabytes."""
SAMPLES = "samples/"
"""Where an archive keeps its samples, which a header read never opens."""
CHUNK_BYTES = 1024 * 1024
ZSTD = 93


def unpacks_within(path: Path, limit: int = MAX_UNPACKED_BYTES) -> bool:
    """Whether the archive's members but its samples unpack to at most `limit` bytes together
    (a member of a compression it cannot read counts as too big)."""
    total = 0
    with zipfile.ZipFile(path) as archive, path.open("rb") as raw:
        for info in archive.infolist():
            if info.is_dir() or info.filename.startswith(SAMPLES):
                continue
            for piece in _unpacked(_compressed(raw, info), info.compress_type):
                total += piece
                if total > limit:
                    return False
    return True


def _compressed(raw: io.BufferedReader, info: zipfile.ZipInfo) -> bytes:
    """The member's bytes as stored (after its local header, whose name and extra field may
    differ in length from the central directory's)."""
    raw.seek(info.header_offset)
    name_length, extra_length = struct.unpack("<HH", raw.read(30)[26:30])
    raw.seek(info.header_offset + 30 + name_length + extra_length)
    return raw.read(info.compress_size)


def _unpacked(data: bytes, method: int) -> Iterator[int]:
    """The sizes of the member's content, a chunk at a time, as it is decompressed."""
    if method == zipfile.ZIP_STORED:
        yield len(data)
    elif method == zipfile.ZIP_DEFLATED:
        inflater = zlib.decompressobj(-15)
        while data:
            out = inflater.decompress(data, CHUNK_BYTES)
            data = inflater.unconsumed_tail
            if not out:
                break
            yield len(out)
    elif method == ZSTD:
        import zstandard  # Inspect's own dependency, there when Inspect is

        with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data)) as reader:
            while out := reader.read(CHUNK_BYTES):
                yield len(out)
    else:
        yield MAX_UNPACKED_BYTES + 1
