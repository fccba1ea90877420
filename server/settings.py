"""All configuration, read once from the environment (prefix ALMANAC_) and passed down."""

import os
import re
import tempfile
from pathlib import Path
from typing import Annotated, Literal, Self
from urllib.parse import urlsplit

from pydantic import Field, ValidationInfo, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict
from redis.connection import parse_url

from request_limits import BucketPolicy, DocumentLimits
from server.manifests import read_manifest
from store import mongodb_uri_problem

# Pages on a developer's machine, any port (`almanac serve --allow-local-origins`).
LOCAL_ORIGINS = r"http://(localhost|127\.0\.0\.1)(:[0-9]+)?"
GRAPHIQL_PACKAGES = Path(__file__).parent / "graphiql" / "node_modules"


def default_data_dir() -> Path:
    """`$XDG_DATA_HOME/benchmark-almanac`, by default `~/.local/share/benchmark-almanac`."""
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "benchmark-almanac"


def unwritable(directory: Path) -> str | None:
    """Why the embedded store could not keep its data in `directory`, if it could not."""
    existing = directory
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        return f"{existing} is not a directory"
    try:
        with tempfile.TemporaryDirectory(dir=existing):
            return None
    except OSError as error:
        return f"{existing} is not writable ({error.strerror})"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="ALMANAC_", frozen=True)

    mongodb_uri: str | None = Field(
        default=None,
        description="MongoDB connection string; unset means the embedded store in `data_dir`.",
    )
    data_dir: Path = Field(
        default_factory=lambda: default_data_dir(),
        description="Where the embedded store keeps its data (without a MongoDB URI).",
    )
    mongodb_database: str = Field(default="almanac", description="MongoDB database name.")
    mongodb_timeout_seconds: float = Field(
        default=30.0,
        gt=0,
        le=3600,
        description="How long a call waits for MongoDB to answer before it fails (pymongo's "
        "serverSelectionTimeoutMS): at start, an unreachable MongoDB is named after this.",
    )
    change_retention_days: float = Field(
        default=90.0,
        gt=0,
        le=3650,
        description="How long the change log keeps a change: the change feed's reach back, and "
        "how long a process may be away and still catch up exactly.",
    )
    max_body_bytes: int = Field(
        default=100_000, gt=0, description="Largest request body accepted, in bytes."
    )
    graphiql_packages: Path = Field(
        default=GRAPHIQL_PACKAGES,
        description="node_modules folder holding the graphiql, react and react-dom packages.",
    )
    response_cache_bytes: int = Field(
        default=64 * 1024 * 1024,
        ge=0,
        description=(
            "Memory for reusing answers to repeated queries until the data changes; 0 turns "
            "it off. On MongoDB it needs a replica set (change streams) to know of changes."
        ),
    )
    # Memory: every cache is bounded by the bytes it holds, keys (document texts) included.
    document_cache_bytes: int = Field(
        default=16 * 1024 * 1024,
        ge=0,
        description="Memory for parsed and checked documents (and refusals), so repeats skip it.",
    )
    cost_cache_bytes: int = Field(
        default=4 * 1024 * 1024, ge=0, description="Memory for the costs of repeated requests."
    )
    persisted_query_cache_bytes: int = Field(
        default=16 * 1024 * 1024,
        ge=0,
        description="Bytes for persisted queries registered (in this process; with Redis, in Redis "
        "for every process), least recently used first out.",
    )
    budget_buckets: int = Field(
        default=50_000,
        gt=0,
        description="Budgets kept in this process (without Redis), some 330 bytes each; the "
        "least recently used is forgotten first, and starts full again.",
    )
    log_level: Literal["critical", "error", "warning", "info", "debug"] = Field(
        default="info", description="Log level of the server."
    )
    log_format: Literal["text", "json"] = Field(
        default="text",
        description="`json`: one JSON object a line (for a log pipeline); `text`: for people.",
    )
    metrics: bool = Field(default=True, description="Serve Prometheus metrics at /metrics.")
    metrics_port: int | None = Field(
        default=None,
        ge=1,
        le=65535,
        description="Serve /metrics on this port of its own instead of the API's.",
    )

    tracing: bool = Field(
        default=False,
        description="OpenTelemetry spans, exported by OTLP to the collector the standard "
        "OTEL_EXPORTER_OTLP_* variables name (by default http://localhost:4318).",
    )
    # Shutdown (on SIGTERM; a Ctrl-C skips the drain): /readyz answers 503 while requests are
    # still served, so a load balancer moves traffic away; then in-flight requests finish.
    shutdown_drain_seconds: float = Field(
        default=5.0,
        ge=0,
        description="After SIGTERM, how long /readyz answers 503 before the server stops "
        "accepting connections.",
    )
    shutdown_timeout_seconds: int = Field(
        default=20,
        gt=0,
        description="After the drain, how long in-flight requests may take to finish before "
        "they are cancelled.",
    )

    # Limits, refused before execution (docs/partners.md explains them to clients).
    max_query_cost: int = Field(default=5_000, gt=0, description="Most points one request costs.")
    max_depth: int = Field(default=15, gt=0, description="Deepest nesting of fields.")
    max_aliases: int = Field(default=30, ge=0, description="Most aliases in one document.")
    max_tokens: int = Field(default=5_000, gt=0, description="Most lexical tokens in a document.")
    max_batch: int = Field(default=10, gt=0, description="Most operations in one batch.")
    max_concurrent_exports: int = Field(
        default=4,
        gt=0,
        description="Most /export.ndjson downloads this process streams at once (one per "
        "client); one more is answered 503 with Retry-After.",
    )
    request_timeout_seconds: float = Field(
        default=10.0, gt=0, description="A request running longer is stopped with TIMEOUT."
    )
    # Subscriptions (server/graphql/subscriptions/protocols.py): streams open at once, across
    # every process with
    # Redis (request_limits/slots.py), in each process without it.
    max_subscriptions_per_key: int = Field(
        default=10, gt=0, description="Open subscriptions per API key; one more is refused."
    )
    max_subscriptions_anonymous: int = Field(
        default=2,
        gt=0,
        description="Open subscriptions per address without an API key; one more is refused.",
    )
    subscription_send_timeout_seconds: float = Field(
        default=10.0,
        gt=0,
        le=3600,
        description="How long one message to a subscriber may wait to be sent (its client not "
        "reading); past it the subscription is closed and its slot freed.",
    )
    subscription_key_check_seconds: float = Field(
        default=30.0,
        gt=0,
        description="How often an open subscription's API key is checked again: a revoked key's "
        "subscriptions end (UNAUTHENTICATED) within this time, in every process.",
    )
    websocket_init_timeout_seconds: float = Field(
        default=10.0,
        gt=0,
        description="How long a new WebSocket may wait before `connection_init`; then it is "
        "closed (4408).",
    )
    websocket_idle_seconds: float = Field(
        default=60.0,
        gt=0,
        description="How long a WebSocket may hold no subscription; then it is closed (1000).",
    )
    # Budgets: leaky buckets of points, per API key and per address for anonymous clients.
    key_bucket_capacity: int = Field(default=20_000, gt=0)
    key_restore_rate: float = Field(default=1_000.0, gt=0, description="Points per second.")
    anonymous_bucket_capacity: int = Field(default=5_000, gt=0)
    anonymous_restore_rate: float = Field(default=100.0, gt=0, description="Points per second.")
    anonymous_access: bool = Field(
        default=True, description="Whether requests without an API key are served at all."
    )
    redis_url: str | None = Field(
        default=None,
        description="Redis for budgets, persisted queries and subscriptions' leases shared by "
        "every process; unset means each process keeps its own.",
    )
    redis_key_prefix: str = Field(default="almanac:", description="Prefix of every Redis key.")
    trusted_documents: Path | None = Field(
        default=None,
        description="A manifest of documents by id (Apollo's persisted-query manifest, Relay's "
        "persisted_queries.json, or almanac trusted-documents'): when set, only these run "
        "(admin keys excepted).",
    )
    # Connections: slow, idle and oversized clients let go (server/transport/http_protocol.py).
    header_timeout_seconds: float = Field(
        default=10.0, gt=0, description="A request's head must arrive within this, or 408."
    )
    body_timeout_seconds: float = Field(
        default=30.0, gt=0, description="A request's body must arrive within this, or 408."
    )
    keep_alive_timeout_seconds: int = Field(
        default=5, gt=0, description="An idle keep-alive connection is closed after this."
    )
    max_connections: int = Field(
        default=2_048,
        gt=0,
        description="Open connections per process; one more is answered 503 and closed.",
    )
    max_header_bytes: int = Field(
        default=16_384, gt=0, description="Largest request head (line and headers), or 431."
    )
    max_header_lines: int = Field(default=100, gt=0, description="Most header lines, or 431.")
    # HTTP
    forwarded_allow_ips: str = Field(
        default="127.0.0.1",
        description="Addresses of the reverse proxies whose X-Forwarded-For is believed "
        "(comma-separated, or *): the client's address then names its budget.",
    )
    cors_origins: Annotated[list[str], NoDecode] = Field(
        default=[], description="Origins browsers may call the API from, comma-separated."
    )
    cors_origin_regex: str | None = Field(
        default=None,
        description="Origins browsers may call the API from, as a regular expression matching "
        "the whole origin (`./dev serve` sets one for local dev servers).",
    )
    cache_max_age_seconds: int = Field(
        default=0, ge=0, description="max-age of cacheable GET answers (ETags revalidate them)."
    )
    max_staleness_seconds: float = Field(
        default=1.0,
        ge=0,
        le=3600,
        description="How long after a change a reader may still get an answer it retired (marked "
        "stale: `Age`, `extensions.freshness`) while the new one is computed; `0`: never.",
    )
    # Releases (releases/): what their Croissant descriptors and citations name.
    site_name: str = Field(
        default="Benchmark Almanac", description="The almanac's name, as releases are cited."
    )
    release_license_url: str | None = Field(
        default=None,
        description="The license the almanac's data is published under (a URL), named by each "
        "release's Croissant descriptor (/releases/<id>/croissant.json); unset: none is served.",
    )
    # Webhooks (server/webhooks.py): each process's delivery worker sends the changes.
    webhooks: bool = Field(
        default=True, description="Run the delivery worker in this process (false: never send)."
    )
    webhook_retry_seconds: float = Field(
        default=86_400.0,
        gt=0,
        description="How long a failing delivery is retried; past it, its endpoint is disabled.",
    )
    webhook_backoff_seconds: float = Field(
        default=5.0, gt=0, description="The first retry's most delay; doubled at each attempt."
    )
    webhook_max_backoff_seconds: float = Field(
        default=3_600.0, gt=0, description="The most delay between two attempts."
    )
    webhook_timeout_seconds: float = Field(
        default=10.0,
        gt=0,
        le=60,
        description="The deadline of one delivery attempt, all of it (resolving, connecting, "
        "sending, reading the answer); at shutdown, the most an attempt in flight is waited for.",
    )
    webhook_lease_seconds: float = Field(
        default=60.0,
        gt=0,
        description="How long a process holds an endpoint's deliveries without renewing: after "
        "it dies, another process takes them over once this has passed.",
    )
    webhook_allow_http: bool = Field(
        default=False, description="Allow webhook URLs with `http` (else `https` only)."
    )
    webhook_allow_private: bool = Field(
        default=False,
        description="Allow webhooks to loopback, private, link-local and other non-public "
        "addresses (a test rig; never cloud metadata addresses).",
    )
    webhook_delivery_retention_seconds: float = Field(
        default=30 * 86_400.0,
        gt=0,
        description="How long a webhook delivery done (delivered or given up) is kept, from "
        "when its event was made; pending ones are kept until done.",
    )

    @field_validator("cors_origins", mode="before")
    @classmethod
    def _comma_separated(cls, value: object) -> object:
        if isinstance(value, str):
            return [origin.strip() for origin in value.split(",") if origin.strip()]
        return value

    # What the types alone don't catch: addresses that don't parse, files that aren't there.
    @field_validator("mongodb_uri")
    @classmethod
    def _a_mongodb_uri(cls, uri: str | None) -> str | None:
        if uri and (problem := mongodb_uri_problem(uri)):
            raise ValueError(problem)
        return uri

    @field_validator("data_dir")
    @classmethod
    def _a_writable_data_dir(cls, directory: Path, info: ValidationInfo) -> Path:
        if not info.data.get("mongodb_uri") and (problem := unwritable(directory)):
            raise ValueError(problem)
        return directory

    @field_validator("redis_url")
    @classmethod
    def _a_redis_url(cls, url: str | None) -> str | None:
        if url:
            parse_url(url)  # type: ignore[no-untyped-call]
        return url

    @field_validator("trusted_documents")
    @classmethod
    def _a_manifest(cls, path: Path | None) -> Path | None:
        # Its form only: whether its documents run is checked against the schema where the
        # schema is (server.graphql.persisted: the app as it is made, `almanac`'s commands).
        if path is not None:
            try:
                read_manifest(path)
            except OSError as error:
                raise ValueError(f"{path}: {error.strerror}") from None
        return path

    @field_validator("cors_origins")
    @classmethod
    def _origins(cls, origins: list[str]) -> list[str]:
        for origin in origins:
            parts = urlsplit(origin)
            if origin != "*" and (parts.scheme not in ("http", "https") or not parts.netloc):
                raise ValueError(f"{origin!r} is not an origin like https://example.org")
        return origins

    @field_validator("cors_origin_regex")
    @classmethod
    def _a_pattern(cls, pattern: str | None) -> str | None:
        if pattern is not None:
            try:
                re.compile(pattern)
            except re.error as error:
                raise ValueError(f"{pattern!r} is not a regular expression: {error}") from None
        return pattern

    @model_validator(mode="after")
    def _any_allowed_request_fits_a_bucket(self) -> Self:
        smallest = min(self.key_bucket_capacity, self.anonymous_bucket_capacity)
        if self.max_query_cost > smallest:
            raise ValueError(
                f"max_query_cost ({self.max_query_cost}) must not exceed the smallest bucket "
                f"({smallest}), or a request allowed by cost could never run"
            )
        return self

    @property
    def document_limits(self) -> DocumentLimits:
        return DocumentLimits(
            max_tokens=self.max_tokens, max_depth=self.max_depth, max_aliases=self.max_aliases
        )

    @property
    def key_budget(self) -> BucketPolicy:
        return BucketPolicy(self.key_bucket_capacity, self.key_restore_rate)

    @model_validator(mode="after")
    def _a_lease_longer_than_a_delivery(self) -> Self:
        if self.webhook_lease_seconds < 2 * self.webhook_timeout_seconds:
            raise ValueError(
                f"webhook_lease_seconds ({self.webhook_lease_seconds}) must be at least twice "
                f"webhook_timeout_seconds ({self.webhook_timeout_seconds}): a lease is renewed "
                "at half its time, and must not end while a delivery waits"
            )
        return self

    @property
    def anonymous_budget(self) -> BucketPolicy:
        return BucketPolicy(self.anonymous_bucket_capacity, self.anonymous_restore_rate)
