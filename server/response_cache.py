"""Reusing answers: a repeated query costs no execution until the data changes.

An answer's `data` is kept, encoded, under the exact operation (document text, operation name,
variables) and the store's data version when it was computed, so any change to the data retires
it. Only successful query answers are kept; the cache is bounded by the bytes it holds, the
operations' texts and variables included.
"""

import sys
from dataclasses import dataclass

from request_limits.bounded_cache import BoundedCache

OperationKey = tuple[str, str | None, bytes]


@dataclass(frozen=True, slots=True)
class CachedAnswer:
    version: int
    data: bytes


class ResponseCache:
    def __init__(self, max_bytes: int) -> None:
        self._answers: BoundedCache[OperationKey, CachedAnswer] = BoundedCache(
            max_bytes, lambda answer: sys.getsizeof(answer) + sys.getsizeof(answer.data)
        )

    def get(self, key: OperationKey, version: int | None) -> bytes | None:
        if version is None:
            return None
        answer = self._answers.get(key)
        return answer.data if answer is not None and answer.version == version else None

    def put(self, key: OperationKey, version: int | None, data: bytes) -> None:
        if version is not None:
            self._answers.put(key, CachedAnswer(version=version, data=data))

    @property
    def bytes_held(self) -> int:
        return self._answers.bytes_held
