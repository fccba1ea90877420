"""What every store offers: the one interface the rest of the API reads and writes through,
made of small roles. Each method is declared once, here, with what it is to the views of a
store (store.reads: a read and what it depends on, a write, a cursor, or lifelong); adding one
is a line here and its two implementations.

Two implementations hold the same documents: `store.mongo.MongoStore` (MongoDB, through motor:
production) and `store.sqlite.SqliteStore` (SQLite in a data directory: the default). Each
public coroutine is one round trip (or transaction).
"""

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, Protocol

from store import reads as r
from store import subjects as s
from store.changes import Change, ChangeFilter, ChangeReceipt, DataVersion
from store.documents import (
    ApiKeyDoc,
    BenchmarkDoc,
    BenchmarkSummaryDoc,
    BudgetDoc,
    CategoryCountDoc,
    CategoryDoc,
    DeliveryDoc,
    LabDoc,
    LeadersDoc,
    ModelDoc,
    SiteFiguresDoc,
    TrackedRankDoc,
    WebhookDoc,
)
from store.queries import (
    BenchmarkFilter,
    Collection,
    ItemCounts,
    Neighbourhood,
    NeighbourhoodRequest,
    Order,
    SeedState,
    Write,
)


class Documents(Protocol):
    """Writes of the almanac's documents, each logged as a change in its own transaction; with
    a `receipt`, the changes logged are noted in it (a mutation's cursor: store.changes)."""

    @r.writes
    async def replace(
        self,
        collection: Collection,
        key: dict[str, Any],
        doc: Any,
        *,
        along: dict[str, dict[str, Any]] | None = None,
        receipt: ChangeReceipt | None = None,
    ) -> str:
        """Write a site record in place of the one under `key`: "created", "updated" or
        "unchanged"; with the site records `along` (by id) written in the same transaction."""
        ...

    @r.writes
    async def insert(
        self,
        collection: Collection,
        doc: Any,
        *,
        by: str | None = None,
        receipt: ChangeReceipt | None = None,
    ) -> None:
        """Store a new document, `by` its writer (for the change log, where the document does
        not say: a lab, a category)."""
        ...

    @r.writes
    async def insert_many(
        self,
        collection: Collection,
        docs: list[Any],
        *,
        by: str | None = None,
        receipt: ChangeReceipt | None = None,
    ) -> None: ...
    @r.writes
    async def replace_at_revision(
        self,
        collection: Collection,
        slug: str,
        revision: int,
        doc: Any,
        *,
        receipt: ChangeReceipt | None = None,
    ) -> bool: ...
    @r.writes
    async def write_batch(
        self, writes: list[Write], *, receipt: ChangeReceipt | None = None
    ) -> list[bool]: ...
    @r.writes
    async def set_tracked_ranks(
        self,
        ranks: dict[str, tuple[int, list[TrackedRankDoc]]],
        leaders: dict[str, LeadersDoc] | None = None,
        *,
        receipt: ChangeReceipt | None = None,
    ) -> list[str]:
        """Place tracked models anew on these benchmarks' leaderboards, with (by slug) their
        leaders anew, each if still at the revision given: the slugs that moved on."""
        ...


class Benchmarks(Protocol):
    """Reads of benchmarks: pages, neighbourhoods, leaderboards."""

    @r.reads(r.documents_by_slugs)
    async def documents_by_slugs(self, collection: Collection, slugs: list[str]) -> list[Any]: ...
    @r.reads(r.benchmarks_by_slugs)
    async def benchmarks_by_slugs(self, slugs: list[str]) -> list[BenchmarkDoc]: ...
    @r.reads(r.benchmark_with_neighbourhood)
    async def benchmark_with_neighbourhood(
        self, slug: str, siblings: int
    ) -> tuple[BenchmarkDoc, Neighbourhood] | None: ...
    @r.reads(lambda args, found: set().union(*map(r.neighbourhood, found)))
    async def neighbourhoods(self, requests: list[NeighbourhoodRequest]) -> list[Neighbourhood]: ...
    @r.reads(lambda args, found: {s.LISTINGS, *s.of_benchmarks(found)})
    async def benchmarks_with_model_keys(self, keys: list[str]) -> list[BenchmarkDoc]: ...
    async def benchmarks_without_leaders(self, after: str, limit: int) -> list[BenchmarkDoc]:
        """Up to `limit` benchmarks, in slug order after `after`, whose leaders are not stored
        (written before they were), without their history."""
        ...

    @r.reads(lambda args, found: {s.CATALOG, *s.of_summaries(found[0])})
    async def benchmark_page(
        self, where: BenchmarkFilter, order: Order, after: list[Any] | None, limit: int
    ) -> tuple[list[BenchmarkSummaryDoc], int]:
        """Up to `limit` benchmarks of the catalog in `order`, after the one whose order key
        is `after` (keyset paging), as summaries (no entry is read), and how many match."""
        ...

    @r.reads(lambda args, found: {s.benchmark(args[0])})
    async def leaderboard_size(self, slug: str) -> int | None:
        """How many models the benchmark's leaderboard lists (by their names as listed: at
        least its rows), by its index alone; None if there is no such benchmark."""
        ...

    @r.reads(lambda args, found: {s.ranks(args[0]), *s.of_benchmarks(found[0])})
    async def model_results(
        self, model: str, offset: int, limit: int
    ) -> tuple[list[BenchmarkDoc], int]: ...
    @r.reads(lambda args, found: {s.CATALOG})
    async def benchmark_parents(self) -> dict[str, str | None]: ...
    async def benchmarks(self) -> list[BenchmarkDoc]: ...


class Catalog(Protocol):
    """Reads of the models, labs, categories and site records around the benchmarks."""

    @r.reads(lambda args, found: {s.CATALOG})
    async def categories(self) -> list[CategoryCountDoc]: ...
    @r.reads(r.models)
    async def models_by_keys(self, keys: list[str]) -> list[ModelDoc]: ...
    @r.reads(r.models_by_slugs)
    async def models_by_slugs(self, slugs: list[str]) -> list[ModelDoc]: ...
    @r.reads(r.models)
    async def models(self) -> list[ModelDoc]: ...
    @r.reads(lambda args, found: {s.CATALOG, s.MODELS, s.LABS, s.CATEGORIES})
    async def item_counts(self) -> ItemCounts: ...
    @r.reads(lambda args, found: {s.SITE})
    async def site_figures(self) -> SiteFiguresDoc: ...
    @r.reads(lambda args, found: {s.SITE})
    async def provenance(self) -> list[str]: ...
    @r.reads(lambda args, found: {s.LABS})
    async def labs(self) -> list[LabDoc]: ...
    @r.reads(lambda args, found: {s.CATEGORIES})
    async def known_categories(self) -> list[CategoryDoc]: ...
    @r.cursor
    def documents_in_batches(self, collection: Collection, size: int) -> AsyncIterator[list[Any]]:
        """Every document of one of the `EXPORTED` collections, whole (a benchmark with its
        history), read through a cursor `size` at a time: memory holds one batch, however
        large the collection. By slug; benchmarks without a parent before the tracks, so that
        an import meets each parent before its tracks. One round trip a batch."""
        ...


class Keys(Protocol):
    """API keys."""

    @r.reads(lambda args, found: {s.KEYS})
    async def api_key(self, key_id: str) -> ApiKeyDoc | None: ...
    @r.reads(lambda args, found: {s.KEYS})
    async def api_keys(self) -> list[ApiKeyDoc]: ...
    @r.writes
    async def revoke_api_key(self, name: str, at: str) -> bool: ...
    @r.writes
    async def set_api_key_budget(self, name: str, budget: BudgetDoc | None) -> bool: ...


class ChangeLog(Protocol):
    """The change log (store.changes): every write's change, and this process's view of it."""

    version: DataVersion

    @r.lifelong
    async def follow_changes(self) -> None:
        """Apply the changes other processes log to `version`, as they log them, until
        cancelled."""
        ...

    async def changes_after(
        self,
        sequence: int,
        limit: int,
        where: ChangeFilter | None = None,
        *,
        newest_first: bool = False,
    ) -> list[Change]: ...
    async def change_bounds(self) -> tuple[int, int]: ...
    @r.lifelong  # a wait, not a call to time: neither watched nor noted
    async def change_applied(self, sequence: int) -> None:
        """Return once this process has applied every change up to `sequence` (its follower
        reading the log for it at once). Unbounded: the caller bounds it (a request)."""
        ...


class Webhooks(Protocol):
    """Webhooks (the worker and schema's mutations): their endpoints, leases and deliveries;
    no change is logged."""

    async def insert_webhook(self, doc: WebhookDoc, most: int) -> bool:
        """Store the webhook unless its owner has `most` already (one atomic check, so
        concurrent creations cannot pass it together); False if it has."""
        ...

    async def webhook(self, webhook_id: str) -> WebhookDoc | None: ...
    async def webhooks(self, owner: str | None = None) -> list[WebhookDoc]:
        """The webhooks made by the key called `owner` (None: every one), oldest first."""
        ...

    async def update_webhook(
        self, webhook_id: str, fields: dict[str, Any], holder: str | None = None
    ) -> bool:
        """Set `fields` of the webhook; with `holder`, only while that worker holds its
        lease. False if there is no such webhook (or the lease is another's)."""
        ...

    async def delete_webhook(self, webhook_id: str) -> bool: ...
    async def take_webhook_lease(
        self, webhook_id: str, holder: str, now: float, until: float
    ) -> bool:
        """Hold the enabled webhook's lease until `until`, if it is free, expired (before
        `now`) or `holder`'s already: one conditional update, so one worker holds it."""
        ...

    async def save_delivery(self, doc: DeliveryDoc) -> None: ...
    async def delivery(self, delivery_id: str) -> DeliveryDoc | None: ...
    async def deliveries(
        self, webhook_id: str, limit: int, status: str | None = None
    ) -> list[DeliveryDoc]:
        """A webhook's deliveries (with `status`, if given), newest first."""
        ...

    async def prune_deliveries(self, before: str) -> int:
        """Delete the deliveries done (delivered or failed) made before the instant `before`
        (`created_at`); how many were."""
        ...


class Keeping(Protocol):
    """The store as a whole: reachable, seeded, copied, closed."""

    embedded: bool

    @r.reads(r.nothing)
    async def ping(self) -> None: ...
    async def is_empty(self) -> bool: ...
    async def seed_state(self) -> SeedState: ...
    @r.writes
    async def mark_seed(self, finished: bool) -> None: ...
    @r.lifelong
    def seed_lock(self) -> AbstractAsyncContextManager[None]:
        """Held by the one process seeding the store, for the whole seed."""
        ...

    async def dump(self) -> dict[str, list[Any]]: ...
    @r.writes
    async def backup(self, target: Path) -> None: ...
    @r.lifelong
    async def close(self) -> None: ...


class Store(Documents, Benchmarks, Catalog, Keys, ChangeLog, Webhooks, Keeping, Protocol):
    """The almanac's collections: every role a store plays."""
