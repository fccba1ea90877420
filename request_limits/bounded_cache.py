"""Caches bounded by the memory they really hold, so that no client can grow the server.

Every entry is counted at its keys' and values' real size plus what the cache spends to hold it
(measured with tracemalloc: about 160 bytes an entry for cachetools' LRU bookkeeping; 300 are
counted, from when each value had a wrapper of its own). An entry larger than `max_entry_bytes`
is not kept at all, so a few huge requests cannot flush everything else.

cachetools measures a value alone (its `getsizeof`, once as it sets it): the entry's size, key
included, is worked out just before (`__setitem__`) and given as the value's, so that a lookup
stays cachetools' own, with no wrapper to unwrap.
"""

import sys
from collections.abc import Callable
from typing import TypeVar

from cachetools import Cache, LRUCache

K = TypeVar("K")
V = TypeVar("V")

ENTRY_OVERHEAD_BYTES = 300


class EntryTooLarge(ValueError):
    """An entry over the cache's `max_entry_bytes`: not kept."""


class BoundedCache(LRUCache[K, V]):
    """A least-recently-used cache (cachetools') holding at most `max_bytes`, keys included.
    Its values are kept as they are: a lookup (`get`) is cachetools' own, with no step of
    this module's (it is made on every warm request)."""

    def __init__(
        self,
        max_bytes: int,
        value_size: Callable[[V], int],
        max_entry_bytes: int | None = None,
    ) -> None:
        super().__init__(maxsize=max(max_bytes, 1), getsizeof=self._measured)
        self.max_bytes = max_bytes
        self.max_entry_bytes = max_bytes // 8 if max_entry_bytes is None else max_entry_bytes
        self.value_size = value_size
        self.measured = 0
        """The size of the entry being set, its key included (cachetools asks the value's)."""

    def __setitem__(self, key: K, value: V) -> None:
        size = object_size(key) + self.value_size(value) + ENTRY_OVERHEAD_BYTES
        if self.max_bytes == 0 or size > self.max_entry_bytes:
            raise EntryTooLarge(f"an entry of {size} bytes is over {self.max_entry_bytes}")
        self.measured = size
        super().__setitem__(key, value)

    def _measured(self, value: V) -> int:
        """cachetools' measure of the entry it is given (in `__setitem__`): as measured there."""
        return self.measured

    def put(self, key: K, value: V) -> bool:
        """Keep `value` under `key`; False (and nothing kept) if the entry is too large."""
        try:
            self[key] = value
        except EntryTooLarge:
            self.pop(key, None)
            return False
        return True

    def peek(self, key: K) -> V | None:
        """The value kept under `key` (None if none), left where it is in the order of use:
        cachetools' plain mapping lookup, without the LRU's move to the end."""
        return Cache.__getitem__(self, key) if key in self else None

    @property
    def bytes_held(self) -> int:
        return int(self.currsize)


def object_size(value: object) -> int:
    """Bytes held by a key or a plain value: strings, bytes, numbers, None, and tuples of them."""
    if isinstance(value, tuple):
        return sys.getsizeof(value) + sum(object_size(item) for item in value)
    return sys.getsizeof(value)
