"""Caches bounded by the bytes they hold: keys counted, the least recently used out first, an
entry over its bound never kept."""

import sys

from request_limits import BoundedCache
from request_limits.bounded_cache import ENTRY_OVERHEAD_BYTES


def entry_bytes(key: str, value: bytes) -> int:
    return sys.getsizeof(key) + len(value) + ENTRY_OVERHEAD_BYTES


def test_an_entry_counts_its_key_and_value() -> None:
    cache: BoundedCache[str, bytes] = BoundedCache(100_000, len)
    assert cache.put("k" * 500, b"v" * 1000)
    assert cache.bytes_held == entry_bytes("k" * 500, b"v" * 1000)
    assert cache.get("k" * 500) == b"v" * 1000
    assert cache.get("other") is None


def test_the_least_recently_used_goes_first() -> None:
    one = entry_bytes("a", b"x" * 1000)
    cache: BoundedCache[str, bytes] = BoundedCache(3 * one, len, max_entry_bytes=one)
    for key in "abc":
        assert cache.put(key, b"x" * 1000)
    assert cache.get("a") is not None  # used: "b" is now the least recently used
    assert cache.put("d", b"x" * 1000)
    assert [key for key in "abcd" if cache.get(key) is not None] == ["a", "c", "d"]
    assert cache.bytes_held <= 3 * one


def test_an_entry_over_its_bound_is_not_kept_and_drops_the_earlier_value() -> None:
    cache: BoundedCache[str, bytes] = BoundedCache(8_000, len)  # an entry at most 1,000 bytes
    assert cache.put("k", b"small")
    assert not cache.put("k", b"x" * 2_000)
    assert cache.get("k") is None
    assert cache.bytes_held == 0


def test_a_cache_of_no_bytes_keeps_nothing() -> None:
    cache: BoundedCache[str, bytes] = BoundedCache(0, len)
    assert not cache.put("k", b"")
    assert cache.get("k") is None
    assert len(cache) == 0


def test_a_peek_leaves_the_order_of_use() -> None:
    one = entry_bytes("a", b"x" * 1000)
    cache: BoundedCache[str, bytes] = BoundedCache(3 * one, len, max_entry_bytes=one)
    for key in "abc":
        assert cache.put(key, b"x" * 1000)
    assert cache.peek("a") == b"x" * 1000  # seen, not used: "a" is still the least recent
    assert cache.peek("z") is None
    assert cache.put("d", b"x" * 1000)
    assert [key for key in "abcd" if cache.peek(key) is not None] == ["b", "c", "d"]
