"""Persisted queries: a client sends a document's SHA-256 instead of its text.

- Automatic persisted queries (Apollo's protocol): `extensions.persistedQuery.sha256Hash`. An
  unknown hash gets `PERSISTED_QUERY_NOT_FOUND`; the client sends the text with the hash once,
  and the hash alone works from then on, over POST or GET. A text is kept only if it parses
  and passes the document limits (the pipeline's own checks, request_limits), in a store
  bounded by the bytes it holds, least recently used first out: in this process, or in Redis
  for every process (one atomic script a registration). A client whose hash was let go sends
  the text again, as for any unknown hash.
- Trusted documents: with a manifest configured, only its documents run (by the id the
  manifest holds, sent as `documentId` or `extensions.persistedQuery.sha256Hash`, or by their
  exact text), except for admin keys. A manifest is the client build's own: Apollo's
  persisted-query manifest (`@apollo/generate-persisted-query-manifest`), Relay's
  `persisted_queries.json`, or `almanac trusted-documents`' (`{"<sha256>": "<text>"}`); each
  of its documents is checked against the schema before any is served.

The view resolves an operation's text here before the schema runs it (graphql_request reads
`documentId` as the persisted query of that hash).
"""

import logging
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from graphql import ASTValidationRule, GraphQLError, NoFragmentCyclesRule, validate
from redis.asyncio import Redis

from api_errors import ApiError, ErrorCode, shown
from request_limits import (
    Argument,
    BoundedCache,
    InProcess,
    InRedis,
    RedisReachability,
    Shared,
    Step,
    limit_rules,
)
from schema import Services, document_problems, known_document, published_types, schema
from server.manifests import read_manifest, sha256_hex

log = logging.getLogger("almanac.persisted")

Found = Literal["sent", "hit", "registered", "trusted"]
"""How a document was found: sent as text, by a known hash, registered with its hash now, or
in the trusted documents."""


def _text(answer: Any) -> str | None:
    return answer.decode() if isinstance(answer, bytes) else None


def _sha256(sha256: str) -> list[Argument]:
    return [sha256]


# KEYS: the texts (a hash of SHA-256 to text), when each was last used (a sorted set of SHA-256
# by tick), the store's tally (a hash: `bytes` held, and `tick`, its clock).
# ARGV: the SHA-256, the text, the most bytes held, the bytes counted an entry beyond its own.
# A text larger than an eighth of the store is not kept (as in process: a few huge texts must
# not push out all the others). A new text is counted, then the least recently used are let go
# until the store fits; a text it holds already is only marked used. Returns 1 if it was new.
PUT = """
local sha, text = ARGV[1], ARGV[2]
local most, overhead = tonumber(ARGV[3]), tonumber(ARGV[4])
local size = #sha + #text + overhead
if size > most / 8 then
  return 0
end
redis.call('ZADD', KEYS[2], redis.call('HINCRBY', KEYS[3], 'tick', 1), sha)
if redis.call('HSETNX', KEYS[1], sha, text) == 0 then
  return 0
end
local held = redis.call('HINCRBY', KEYS[3], 'bytes', size)
while held > most do
  local oldest = redis.call('ZRANGE', KEYS[2], 0, 0)[1]
  if oldest == sha then
    -- Only the new text is left: the tally had drifted (a key lost), so it starts again.
    redis.call('HSET', KEYS[3], 'bytes', size)
    break
  end
  local freed = #oldest + redis.call('HSTRLEN', KEYS[1], oldest) + overhead
  redis.call('HDEL', KEYS[1], oldest)
  redis.call('ZREM', KEYS[2], oldest)
  held = redis.call('HINCRBY', KEYS[3], 'bytes', -freed)
end
return 1
"""

# KEYS as PUT's; ARGV: the SHA-256. The text, marked used (nil: none).
GET = """
local text = redis.call('HGET', KEYS[1], ARGV[1])
if text then
  redis.call('ZADD', KEYS[2], 'XX', redis.call('HINCRBY', KEYS[3], 'tick', 1), ARGV[1])
end
return text
"""

REDIS_ENTRY_BYTES = 200
"""What Redis spends to hold an entry beyond its text and SHA-256 (the hash's and the sorted
set's entries, the SHA-256 held twice), counted towards the store's bound."""


def _ignored(answer: object) -> None:
    """PUT's answer (whether the text was new) tells its caller nothing."""


async def _missed(*args: object) -> None:
    """While Redis fails, a document is not found (and not kept): its client sends the text
    again, as for any unknown hash."""


class Documents:
    """Documents registered, kept where `shared` keeps them, bounded by the bytes they hold
    (least recently used first out), an entry at most an eighth of it."""

    def __init__(self, shared: Shared, max_bytes: int) -> None:
        self.shared = shared
        self.max_bytes = max_bytes
        self.keys = [shared.key("apq:texts"), shared.key("apq:used"), shared.key("apq:tally")]
        self._texts: BoundedCache[str, str] = BoundedCache(max_bytes, sys.getsizeof)
        # The bound steps are the methods: the caller awaits the step itself.
        self.get: Callable[[str], Awaitable[str | None]] = shared.bound(
            Step(GET, _text, keys=self._keys, args=_sha256, here=self._found, down=_missed)
        )
        self.put: Callable[[str, str], Awaitable[None]] = shared.bound(
            Step(PUT, _ignored, keys=self._keys, args=self._put_args, here=self._kept, down=_missed)
        )

    def _keys(self, sha256: str, *text: str) -> list[str]:
        return self.keys

    def _put_args(self, sha256: str, text: str) -> list[Argument]:
        return [sha256, text, self.max_bytes, REDIS_ENTRY_BYTES]

    async def _found(self, sha256: str) -> str | None:
        return self._texts.get(sha256)

    async def _kept(self, sha256: str, text: str) -> None:
        self._texts.put(sha256, text)


class LocalDocuments(Documents):
    """Documents registered with this process."""

    def __init__(self, max_bytes: int) -> None:
        super().__init__(InProcess(), max_bytes)


class RedisDocuments(Documents):
    """Documents shared by every process; Redis failing means a miss, which clients retry."""

    def __init__(self, redis: Redis, prefix: str, max_bytes: int) -> None:
        self.redis = redis
        reachability = RedisReachability(
            log,
            down="persisted queries are not found until it is back (clients send their text)",
            back="persisted queries are shared by every process again",
        )
        super().__init__(InRedis(redis, prefix, reachability), max_bytes)


def load_trusted_documents(path: Path) -> dict[str, str]:
    """The trusted documents of the manifest at `path` by their ids, each checked against the
    schema: one that would not run is refused, naming its id."""
    documents = read_manifest(path)
    for document_id, text in documents.items():
        if problems := document_problems(text):
            raise ValueError(f"{path}: {document_id} does not run on this schema: {problems[0]}")
    return documents


def registrable(text: str, services: Services) -> bool:
    """Whether a text may be kept under its hash: it parses and passes the document limits
    (tokens, fragment cycles, depth, aliases), as the pipeline checks them
    (schema.extensions.document_checks). One that does not is run as sent, and refused there.
    Parsed as the pipeline parses it, once: the pipeline then finds the parse kept."""
    known = known_document(services, text)
    if isinstance(known.parsed, GraphQLError):
        return False
    limits = services.document_limits
    rules: tuple[type[ASTValidationRule], ...] = (NoFragmentCyclesRule, *limit_rules(limits))
    return not validate(published_types(schema), known.parsed, rules)


@dataclass(frozen=True)
class PersistedQueries:
    documents: Documents
    services: Services
    trusted: dict[str, str] | None = None

    async def document_text(
        self,
        query: str | None,
        extensions: dict[str, Any] | None,
        may_run_any: bool,
    ) -> tuple[str, Found]:
        """The document to run, from the request's text or hash, and how it was found."""
        if self.trusted is not None and not may_run_any:
            return self._trusted_text(query, extensions), "trusted"
        sha256 = requested_hash(extensions)
        if sha256 is None and (document_id := (extensions or {}).get(DOCUMENT_ID)) is not None:
            raise ApiError(
                f"Unknown document {shown(document_id)}: this API knows documents by id only "
                'from its trusted documents; send the text, or documentId "sha256:<hash>".',
                code=ErrorCode.PERSISTED_QUERY_NOT_FOUND,
            )
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
        if not registrable(query, self.services):
            return query, "sent"
        await self.documents.put(sha256, query)
        return query, "registered"

    @cached_property
    def _trusted_texts(self) -> frozenset[str]:
        return frozenset(self.trusted.values()) if self.trusted else frozenset()

    def _trusted_text(self, query: str | None, extensions: dict[str, Any] | None) -> str:
        """The trusted document a request names: by the id its manifest holds (as
        `documentId`, or as Apollo's `persistedQuery` hash), or by its exact text."""
        assert self.trusted is not None
        named = sent_document_id(extensions)
        if named is not None and (text := self.trusted.get(named)) is not None:
            return text
        if named is None and query is not None and query in self._trusted_texts:
            return query
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


DOCUMENT_ID = "documentId"
"""Where the request's `documentId`, when it names no SHA-256, waits in its extensions."""


def sent_document_id(extensions: dict[str, Any] | None) -> str | None:
    """The id a request names its document by, exactly as sent: its `documentId`, or Apollo's
    `persistedQuery.sha256Hash` (the id in Apollo's manifest)."""
    if isinstance(document_id := (extensions or {}).get(DOCUMENT_ID), str):
        return document_id
    persisted = (extensions or {}).get("persistedQuery")
    if isinstance(persisted, dict) and isinstance(sha256 := persisted.get("sha256Hash"), str):
        return sha256
    return None
