"""Reusing answers: a repeated query costs no execution until the data changes.

An answer's `data` is kept, encoded, under the exact operation (document text, operation name,
variables) and the store's data version when it was computed, so any change to the data retires
it. Only successful query answers are kept; the cache is bounded by the bytes it holds.
"""

from dataclasses import dataclass

from cachetools import LRUCache

OperationKey = tuple[str, str | None, bytes]


@dataclass(frozen=True, slots=True)
class CachedAnswer:
    version: int
    data: bytes


class ResponseCache:
    def __init__(self, max_bytes: int) -> None:
        self._answers: LRUCache[OperationKey, CachedAnswer] = LRUCache(
            maxsize=max_bytes, getsizeof=lambda answer: len(answer.data) + 200
        )
        self.max_bytes = max_bytes

    def get(self, key: OperationKey, version: int | None) -> bytes | None:
        if version is None:
            return None
        answer = self._answers.get(key)
        return answer.data if answer is not None and answer.version == version else None

    def put(self, key: OperationKey, version: int | None, data: bytes) -> None:
        if version is None or len(data) > self.max_bytes // 8:
            return
        self._answers[key] = CachedAnswer(version=version, data=data)
