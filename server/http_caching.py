"""HTTP caching and compression of answers: strong ETags, conditional GETs, gzip.

The ETag is the SHA-256 of the answer's `data`, so it changes exactly when the answer does:
after any write that changes what the query returns. A gzipped body is a different
representation, so its ETag carries a `-gzip` suffix (a strong ETag names exact bytes).
Surrogate keys name what an answer depends on, so a cache in front can purge exactly what a
change touched. The API serves an answer a change retired for at most
`ALMANAC_MAX_STALENESS_SECONDS` while it computes the new one (server.graphql.operations), with
its `Age`; a cache in front may do the same (`stale-while-revalidate`).
"""

import gzip
import math
from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType

from starlette.requests import Request
from starlette.responses import Response

from store import surrogate_keys

# Smaller bodies are not worth compressing.
COMPRESS_FROM_BYTES = 500


def entity_tag(content_digest: str) -> str:
    """The strong ETag of content with this digest (schema.json.digest)."""
    return f'"{content_digest}"'


def content_coding(accept_encoding: str | None, size: int) -> str | None:
    """`gzip` if the client accepts it and the body is worth compressing, else None."""
    if accept_encoding is None or size < COMPRESS_FROM_BYTES:
        return None
    for item in accept_encoding.split(","):
        coding, *parameters = (part.strip() for part in item.split(";"))
        if coding.lower() in ("gzip", "*") and not any(
            p.replace(" ", "") in ("q=0", "q=0.0", "q=0.00", "q=0.000") for p in parameters
        ):
            return "gzip"
    return None


def encoded(body: bytes, coding: str | None) -> bytes:
    # mtime=0: the same answer always compresses to the same bytes, as its ETag promises.
    return gzip.compress(body, compresslevel=6, mtime=0) if coding == "gzip" else body


def matches(if_none_match: str | None, etag: str) -> bool:
    """Whether `If-None-Match` names this ETag (weak comparison, as RFC 9110 asks for it)."""
    if if_none_match is None:
        return False
    if if_none_match.strip() == "*":
        return True
    return any(tag.strip().removeprefix("W/") == etag for tag in if_none_match.split(","))


def held_etag(request: Request, content_digest: str) -> str | None:
    """The ETag, of either representation (plain or gzipped), that the request's
    `If-None-Match` names for content of this digest, if it names one: the client holds it."""
    if_none_match = request.headers.get("if-none-match")
    if if_none_match is None:
        return None
    plain = entity_tag(content_digest)
    for etag in (plain, f'{plain[:-1]}-gzip"'):
        if matches(if_none_match, etag):
            return etag
    return None


def cache_control(public: bool, max_age: int, stale_seconds: float = 0) -> str:
    """Answers caches may share (anonymous, of nobody's own: server.graphql.response) are
    public; keyed answers and a caller's own are kept by the client's cache only. Past its
    max-age a cache may serve an answer for the whole seconds of the staleness bound while it
    revalidates (`must-revalidate` would forbid that: it stays only without a bound)."""
    scope = "public" if public else "private"
    if (seconds := math.floor(stale_seconds)) > 0:
        return f"{scope}, max-age={max_age}, stale-while-revalidate={seconds}"
    return f"{scope}, max-age={max_age}, must-revalidate"


def age(stale_seconds: float) -> str:
    """The `Age` of a stale answer: the whole seconds (at least 1: it is not fresh) past the
    first change it misses."""
    return str(max(1, math.ceil(stale_seconds)))


def conditional(request: Request, response: Response) -> Response:
    """The response as this request should get it: 304 if the client holds its ETag already,
    else gzipped when that is accepted and worth it (with the ETag of the gzipped bytes)."""
    etag = response.headers.get("etag")
    if etag is None:
        return response
    coding = content_coding(request.headers.get("accept-encoding"), len(response.body))
    if coding is not None:
        etag = f'{etag[:-1]}-{coding}"'  # A strong ETag names exact bytes.
    if_none_match = request.headers.get("if-none-match")
    if coding is None and if_none_match is None:
        return response
    headers = {
        name: value
        for name, value in response.headers.items()
        if name not in ("content-length", "content-type", "etag")
    }
    headers["ETag"] = etag
    if matches(if_none_match, etag):
        return Response(status_code=304, headers=headers)
    if coding is None:
        return response
    headers["Content-Encoding"] = coding
    return Response(
        encoded(bytes(response.body), coding),
        response.status_code,
        headers,
        response.headers["content-type"],
    )


@lru_cache(maxsize=4096)  # a kept answer's headers, made once: on its warm path, one lookup
def cache_tags(reads: frozenset[str]) -> Mapping[str, str]:
    """`Surrogate-Key` (Fastly, Varnish) and `Cache-Tag` (Cloudflare, Akamai): what an answer
    depends on, for a cache in front of the API to purge by (each change's `purgeKeys`)."""
    keys = surrogate_keys(reads)
    return MappingProxyType({"surrogate-key": " ".join(keys), "cache-tag": ",".join(keys)})
