"""JSON encoding of responses and of what is kept from them."""

import hashlib
from typing import Any

import orjson


def encode_json(data: Any, *, sort_keys: bool = False) -> bytes:
    """`data` as JSON, in a bytes object of its own size.

    orjson returns its working buffer: 4 KB for the smallest answer, and up to some ten times
    the length of a larger one (measured with tracemalloc). Answers and keys that caches keep
    would hold that much; the copy costs a microsecond or two.
    """
    encoded = orjson.dumps(data, option=orjson.OPT_SORT_KEYS if sort_keys else None)
    return memoryview(encoded).tobytes()


def digest(content: bytes) -> str:
    """What names these exact bytes: the first 128 bits of their SHA-256, in hex (what an
    answer's ETag says)."""
    return hashlib.sha256(content).hexdigest()[:32]
