"""Reusing whole answers: a repeated query costs no execution until the data changes.

An answer is kept under the exact request (method, Accept header, query string and body) and
the store's data version when it was computed, so any change to the data retires it. Only
successful query answers are kept; the cache is bounded by the bytes it holds.
"""

from dataclasses import dataclass

from cachetools import LRUCache

RequestKey = tuple[str, bytes, bytes, bytes]


@dataclass(frozen=True, slots=True)
class CachedAnswer:
    version: int
    body: bytes
    media_type: str


class ResponseCache:
    def __init__(self, max_bytes: int) -> None:
        self._answers: LRUCache[RequestKey, CachedAnswer] = LRUCache(
            maxsize=max_bytes, getsizeof=lambda answer: len(answer.body) + 200
        )
        self.max_bytes = max_bytes

    def get(self, key: RequestKey, version: int | None) -> CachedAnswer | None:
        if version is None:
            return None
        answer = self._answers.get(key)
        return answer if answer is not None and answer.version == version else None

    def put(self, key: RequestKey, version: int | None, body: bytes, media_type: str) -> None:
        if version is None or len(body) > self.max_bytes // 8:
            return
        self._answers[key] = CachedAnswer(version=version, body=body, media_type=media_type)
