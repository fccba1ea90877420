"""What the store's calls take and give beyond documents: filters, orders, batches of writes,
neighbourhoods, counts, and the errors a store raises (the interface is store.interface)."""

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

from store.documents import (
    BenchmarkDoc,
    BenchmarkSummaryDoc,
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
