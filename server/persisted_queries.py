"""Persisted queries: a client sends a document's SHA-256 instead of its text.

- Automatic persisted queries (Apollo's protocol): `extensions.persistedQuery.sha256Hash`. An
  unknown hash gets `PERSISTED_QUERY_NOT_FOUND`; the client sends the text with the hash once,
  and the hash alone works from then on, over POST or GET.
- Trusted documents: with a manifest configured, only its documents run (by hash, by
  `documentId: "sha256:<hash>"`, or by their exact text), except for admin keys.

The view resolves an operation's text here before the schema runs it (graphql_request reads
`documentId` as the persisted query of that hash).
"""

import contextlib
import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

import orjson
from redis.asyncio import Redis
from redis.exceptions import RedisError

from api_errors import ApiError, ErrorCode
from request_limits import BoundedCache

REDIS_DOCUMENT_SECONDS = 30 * 24 * 3600

Found = Literal["sent", "hit", "registered", "trusted"]
"""How a document was found: sent as text, by a known hash, registered with its hash now, or
in the trusted documents."""


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class DocumentStore(Protocol):
    async def get(self, sha256: str) -> str | None: ...

    async def put(self, sha256: str, text: str) -> None: ...


class LocalDocuments:
    """Documents registered with this process, bounded by the bytes they hold."""

    def __init__(self, max_bytes: int) -> None:
        self._texts: BoundedCache[str, str] = BoundedCache(max_bytes, sys.getsizeof)

    async def get(self, sha256: str) -> str | None:
        return self._texts.get(sha256)

    async def put(self, sha256: str, text: str) -> None:
        self._texts.put(sha256, text)


class RedisDocuments:
    """Documents shared by every process; Redis failing means a miss, which clients retry."""

    def __init__(self, redis: Redis, prefix: str) -> None:
        self.redis = redis
        self.prefix = prefix

    async def get(self, sha256: str) -> str | None:
        try:
            text = await self.redis.get(f"{self.prefix}apq:{sha256}")
        except RedisError:
            return None
        return text.decode() if isinstance(text, bytes) else None

    async def put(self, sha256: str, text: str) -> None:
        with contextlib.suppress(RedisError):
            await self.redis.set(f"{self.prefix}apq:{sha256}", text, ex=REDIS_DOCUMENT_SECONDS)


def trusted_manifest(texts: list[str]) -> dict[str, str]:
    """The manifest of these documents (`ALMANAC_TRUSTED_DOCUMENTS`): each by its SHA-256."""
    return {sha256_hex(text): text for text in texts}


def load_trusted_documents(path: Path) -> dict[str, str]:
    """A manifest `{"<sha256 of the text>": "<text>", ...}`, each hash checked."""
    manifest = orjson.loads(path.read_bytes())
    if not isinstance(manifest, dict):
        raise ValueError(f"{path}: expected a JSON object of sha256 hash to document")
    for sha256, text in manifest.items():
        if not isinstance(text, str) or sha256_hex(text) != sha256:
            raise ValueError(f"{path}: {sha256} is not the SHA-256 of its document")
    return manifest


@dataclass(frozen=True)
class PersistedQueries:
    documents: DocumentStore
    trusted: dict[str, str] | None = None

    async def document_text(
        self,
        query: str | None,
        extensions: dict[str, Any] | None,
        may_run_any: bool,
    ) -> tuple[str, Found]:
        """The document to run, from the request's text or hash, and how it was found."""
        sha256 = requested_hash(extensions)
        if self.trusted is not None and not may_run_any:
            return self._trusted_text(query, sha256), "trusted"
        if sha256 is None:
            if query is None:
                raise ApiError("No GraphQL query found in the request: send `query`.", status=400)
            return query, "sent"
        if query is None:
            if (known := await self.documents.get(sha256)) is None:
                raise ApiError(
                    "PersistedQueryNotFound: send the query text with this hash once.",
                    code=ErrorCode.PERSISTED_QUERY_NOT_FOUND,
                )
            return known, "hit"
        if sha256_hex(query) != sha256:
            raise ApiError(
                "The persisted query's sha256Hash is not the SHA-256 of the query sent with it.",
                code=ErrorCode.PERSISTED_QUERY_HASH_MISMATCH,
            )
        await self.documents.put(sha256, query)
        return query, "registered"

    def _trusted_text(self, query: str | None, sha256: str | None) -> str:
        assert self.trusted is not None
        sha256 = sha256 or (sha256_hex(query) if query is not None else None)
        if sha256 is not None and (text := self.trusted.get(sha256)) is not None:
            return text
        raise ApiError(
            "This API runs only its registered documents; this one is not among them.",
            code=ErrorCode.DOCUMENT_NOT_TRUSTED,
        )


def requested_hash(extensions: dict[str, Any] | None) -> str | None:
    """The SHA-256 a request names in `extensions.persistedQuery`, if any."""
    persisted = (extensions or {}).get("persistedQuery")
    if persisted is None:
        return None
    sha256 = persisted.get("sha256Hash") if isinstance(persisted, dict) else None
    if not isinstance(sha256, str) or persisted.get("version", 1) != 1:
        raise ApiError(
            '`extensions.persistedQuery` must read {"version": 1, "sha256Hash": "<hex>"}.',
            status=400,
        )
    return sha256.lower()
