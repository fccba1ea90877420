"""Caches bounded by the memory they really hold, so that no client can grow the server.

Every entry is counted at its keys' and values' real size plus what the cache spends to hold it
(measured with tracemalloc: about 160 bytes an entry for cachetools' LRU bookkeeping, more for
the tuple and wrapper). An entry larger than `max_entry_bytes` is not kept at all, so a few
huge requests cannot flush everything else.
"""

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from cachetools import LRUCache

K = TypeVar("K")
V = TypeVar("V")

ENTRY_OVERHEAD_BYTES = 300


@dataclass(frozen=True, slots=True)
class _Sized(Generic[V]):
    value: V
    size: int


class BoundedCache(Generic[K, V]):
    """A least-recently-used cache holding at most `max_bytes`, keys included."""

    def __init__(
        self,
        max_bytes: int,
        value_size: Callable[[V], int],
        max_entry_bytes: int | None = None,
    ) -> None:
        self.max_bytes = max_bytes
        self.max_entry_bytes = max_bytes // 8 if max_entry_bytes is None else max_entry_bytes
        self._value_size = value_size
        self._entries: LRUCache[K, _Sized[V]] = LRUCache(
            maxsize=max(max_bytes, 1), getsizeof=lambda entry: entry.size
        )

    def get(self, key: K) -> V | None:
        entry = self._entries.get(key)
        return None if entry is None else entry.value

    def put(self, key: K, value: V) -> bool:
        """Keep `value` under `key`; False (and nothing kept) if the entry is too large."""
        size = object_size(key) + self._value_size(value) + ENTRY_OVERHEAD_BYTES
        if self.max_bytes == 0 or size > self.max_entry_bytes:
            self._entries.pop(key, None)
            return False
        self._entries[key] = _Sized(value, size)
        return True

    @property
    def bytes_held(self) -> int:
        return int(self._entries.currsize)

    def __len__(self) -> int:
        return len(self._entries)


def object_size(value: object) -> int:
    """Bytes held by a key or a plain value: strings, bytes, numbers, None, and tuples of them."""
    if isinstance(value, tuple):
        return sys.getsizeof(value) + sum(object_size(item) for item in value)
    return sys.getsizeof(value)
