"""What every store offers: the one interface the rest of the API reads and writes through.

Two implementations hold the same documents: `store.mongo.MongoStore` (MongoDB, through motor:
production) and `store.sqlite.SqliteStore` (SQLite in a data directory: the default).
"""

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal, Protocol

from store.changes import Change, ChangeFilter, DataVersion
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

SITE_FIGURES_ID = "model_card_coverage"
PROVENANCE_ID = "provenance"
SEED_ID = "seed"
"""The site record that says how far the bundled dataset's seed got (`{"finished": bool}`)."""


class StoreUnavailable(Exception):
    """The store cannot be opened or reached: the message names it and says what to do."""


class SeedState(StrEnum):
    """How far a store got with the bundled dataset, by what it holds (not by who opened it)."""

    NEW = "new"  # nothing stored at all
    STARTED = "started"  # a seed began and did not finish (cut short: a crash, a full disk)
    FINISHED = "finished"
    UNMARKED = "unmarked"  # data, but no seed marker: stored before markers, or not seeded


class AlreadyExists(Exception):
    """A document with the same unique key (a slug, a name, an alias) is already stored."""

    def __init__(self, key: dict[str, Any]) -> None:
        super().__init__(f"already stored: {key}")
        self.key = key


class WriteFailed(Exception):
    """The store could not write (its disk is full, or failed): the write was rolled back."""


class NoOnlineBackup(Exception):
    """This store is backed up with its database's own tools, not by the API."""


@dataclass(frozen=True)
class BenchmarkFilter:
    category: str | None = None
    status: str | None = None
    kind: str | None = None
    lab: str | None = None
    name_contains: str | None = None


class Collection(StrEnum):
    """The store's collections (tables on the embedded store): other layers name them so."""

    BENCHMARKS = "benchmarks"
    MODELS = "models"
    LABS = "labs"
    CATEGORIES = "categories"
    API_KEYS = "api_keys"
    SITE = "site"


@dataclass(frozen=True)
class Write:
    """One document to write in a batch: new (`revision` None), or in place of the stored one
    if that is still at `revision`."""

    collection: Collection
    doc: Any
    revision: int | None = None


@dataclass(frozen=True)
class NeighbourhoodRequest:
    """The benchmarks around one: its family, and a slice of its siblings in the category."""

    family: str  # the family's root: the parent's slug, or the benchmark's own
    category: str
    siblings_offset: int = 0
    siblings_limit: int = 20


@dataclass(frozen=True)
class Neighbourhood:
    """The benchmarks shown around a benchmark: its family (parent and tracks), how many its
    category holds, and a slice of its siblings: the category's other benchmarks, outside the
    family, in use first, then by prominence (higher first), name and slug. Each as its
    summary (what a catalog row shows, with its stored leaders): a page shows no more of them,
    and twenty siblings' leaderboards cost a page more to read than everything else."""

    request: NeighbourhoodRequest
    family: list[BenchmarkSummaryDoc]
    category_count: int
    siblings: list[BenchmarkSummaryDoc]
    sibling_count: int


Order = Literal["prominence", "name", "newest_release"]
"""A catalog's order, each ending with the name and slug so that it is total:
prominence (in use first, then higher prominence), name, or newest release (unknown last)."""

ORDER_FIELDS: dict[str, tuple[str, ...]] = {
    "prominence": ("retired", "demotion", "name_key", "slug"),
    "name": ("name_key", "slug"),
    "newest_release": ("release_key", "name_key", "slug"),
}
"""The fields each order sorts on, all ascending (resolvers.ordering; editing.derived keeps
them), so that one index serves the order and a page after a cursor is found by seeking it:
keyset paging."""


def order_key(doc: BenchmarkSummaryDoc, order: Order) -> list[Any]:
    """Where a benchmark stands in `order`: the values a cursor after it carries."""
    return [doc[field] for field in ORDER_FIELDS[order]]  # type: ignore[literal-required]


SUMMARY_LEFT_OUT = ("entries", "model_card_reports", "history", "tracked_ranks")
"""What a benchmark holds beyond its summary: its leaderboard and what grows with it."""


def summary_of(doc: BenchmarkDoc) -> BenchmarkSummaryDoc:
    """The benchmark as a catalog row reads it (what the stores keep as its summary)."""
    return {k: v for k, v in doc.items() if k not in SUMMARY_LEFT_OUT}  # type: ignore[return-value]


@dataclass(frozen=True)
class ItemCounts:
    """How many labs, categories, models and benchmarks are stored: the items an export holds."""

    labs: int
    categories: int
    models: int
    benchmarks: int

    @property
    def items(self) -> int:
        return self.labs + self.categories + self.models + self.benchmarks


EXPORTED = (Collection.LABS, Collection.CATEGORIES, Collection.MODELS, Collection.BENCHMARKS)
"""The collections an export holds, in the order an import takes them."""


class Store(Protocol):
    """The almanac's collections. Each public coroutine is one round trip (or transaction)."""

    embedded: bool
    version: DataVersion

    async def replace(
        self,
        collection: Collection,
        key: dict[str, Any],
        doc: Any,
        *,
        along: dict[str, dict[str, Any]] | None = None,
    ) -> str:
        """Write a site record in place of the one under `key`: "created", "updated" or
        "unchanged"; with the site records `along` (by id) written in the same transaction."""
        ...

    async def insert(self, collection: Collection, doc: Any, *, by: str | None = None) -> None:
        """Store a new document, `by` its writer (for the change log, where the document does
        not say: a lab, a category)."""
        ...

    async def insert_many(
        self, collection: Collection, docs: list[Any], *, by: str | None = None
    ) -> None: ...
    async def replace_at_revision(
        self, collection: Collection, slug: str, revision: int, doc: Any
    ) -> bool: ...
    async def write_batch(self, writes: list[Write]) -> list[bool]: ...
    async def ping(self) -> None: ...
    async def documents_by_slugs(self, collection: Collection, slugs: list[str]) -> list[Any]: ...
    async def benchmarks_by_slugs(self, slugs: list[str]) -> list[BenchmarkDoc]: ...
    async def benchmark_with_neighbourhood(
        self, slug: str, siblings: int
    ) -> tuple[BenchmarkDoc, Neighbourhood] | None: ...
    async def neighbourhoods(self, requests: list[NeighbourhoodRequest]) -> list[Neighbourhood]: ...
    async def benchmarks_with_model_keys(self, keys: list[str]) -> list[BenchmarkDoc]: ...
    async def benchmarks_without_leaders(self, after: str, limit: int) -> list[BenchmarkDoc]:
        """Up to `limit` benchmarks, in slug order after `after`, whose leaders are not stored
        (written before they were), without their history."""
        ...

    async def benchmark_page(
        self, where: BenchmarkFilter, order: Order, after: list[Any] | None, limit: int
    ) -> tuple[list[BenchmarkSummaryDoc], int]:
        """Up to `limit` benchmarks of the catalog in `order`, after the one whose order key
        is `after` (keyset paging), as summaries (no entry is read), and how many match."""
        ...

    async def leaderboard_size(self, slug: str) -> int | None:
        """How many models the benchmark's leaderboard lists (by their names as listed: at
        least its rows), by its index alone; None if there is no such benchmark."""
        ...

    async def benchmark_parents(self) -> dict[str, str | None]: ...
    async def categories(self) -> list[CategoryCountDoc]: ...
    async def models_by_keys(self, keys: list[str]) -> list[ModelDoc]: ...
    async def models_by_slugs(self, slugs: list[str]) -> list[ModelDoc]: ...
    async def models(self) -> list[ModelDoc]: ...
    async def benchmarks(self) -> list[BenchmarkDoc]: ...
    async def item_counts(self) -> ItemCounts: ...
    def documents_in_batches(self, collection: Collection, size: int) -> AsyncIterator[list[Any]]:
        """Every document of one of the `EXPORTED` collections, whole (a benchmark with its
        history), read through a cursor `size` at a time: memory holds one batch, however
        large the collection. By slug; benchmarks without a parent before the tracks, so that
        an import meets each parent before its tracks. One round trip a batch."""
        ...

    async def site_figures(self) -> SiteFiguresDoc: ...
    async def provenance(self) -> list[str]: ...
    async def labs(self) -> list[LabDoc]: ...
    async def known_categories(self) -> list[CategoryDoc]: ...
    async def api_key(self, key_id: str) -> ApiKeyDoc | None: ...
    async def api_keys(self) -> list[ApiKeyDoc]: ...
    async def revoke_api_key(self, name: str, at: str) -> bool: ...
    async def set_api_key_budget(self, name: str, budget: BudgetDoc | None) -> bool: ...
    async def model_results(
        self, model: str, offset: int, limit: int
    ) -> tuple[list[BenchmarkDoc], int]: ...
    async def set_tracked_ranks(
        self,
        ranks: dict[str, tuple[int, list[TrackedRankDoc]]],
        leaders: dict[str, LeadersDoc] | None = None,
    ) -> list[str]:
        """Place tracked models anew on these benchmarks' leaderboards, with (by slug) their
        leaders anew, each if still at the revision given: the slugs that moved on."""
        ...

    async def is_empty(self) -> bool: ...
    async def seed_state(self) -> SeedState: ...
    async def mark_seed(self, finished: bool) -> None: ...
    def seed_lock(self) -> AbstractAsyncContextManager[None]: ...
    async def dump(self) -> dict[str, list[Any]]: ...
    async def follow_changes(self) -> None: ...
    async def changes_after(
        self,
        sequence: int,
        limit: int,
        where: ChangeFilter | None = None,
        *,
        newest_first: bool = False,
    ) -> list[Change]: ...
    async def change_bounds(self) -> tuple[int, int]: ...
    # Webhooks (server.webhooks): their endpoints, leases and deliveries; no change is logged.
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

    async def backup(self, target: Path) -> None: ...
    async def close(self) -> None: ...
