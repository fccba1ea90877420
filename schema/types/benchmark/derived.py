"""Each benchmark's derived leaderboard (best row per model, ranks, leaders, counts) and its
scores over time, computed once per version of what they read and kept in a bounded
per-process cache, not per request; so are a benchmark's own fields as its type shows them, and
the rows of the leaders stored with a summary (a catalog row's, a page's siblings').

A leaderboard is read off a benchmark's entries and the tracked models they name. So it is kept
under the benchmark's version (slug, revision, time and author of its last change) and the
version of each tracked model its entries name, in the order of their names (None for a name
that names none). A change to the benchmark, or to any model its entries name (a rename, an
alias added or dropped, a model added under one of the names), makes a new key; what the old
one held ages out, least recently used first.

A revision names one content only within one store, and only once written: so what is kept is
kept per store (a test's or a CLI's store is not the server's), and only for documents read
from it. A document a change made (a mutation's answer; a dry run's is never written, and the
write that does take its revision may be another) is computed afresh.
"""

from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, TypeVar, cast
from weakref import WeakKeyDictionary

from request_limits import BoundedCache
from resolvers import (
    Board,
    Row,
    TrackedModels,
    entries_of,
    last_model_added,
    leader,
    leaderboard,
    model_key,
    results_ever_recorded,
    strongest_model_tested,
    tracked_leader,
    tracked_model_count,
)
from resolvers import scores_over_time as points_over_time
from schema.types.leaderboard import LeaderboardRow, ScorePoint
from schema.types.model import Model
from schema.vocabulary import MOST_SELECTIONS, MOST_SLICES, Kept
from store import BenchmarkDoc, BenchmarkSummaryDoc, EntryDoc, ModelDoc, PlaceDoc, Store, underlying

# Measured with tracemalloc on synthetic 100-row boards (bench/synthetic.py), every figure asked
# for: some 500 bytes of objects a row, plus the entry it keeps from being freed (some 600); a
# score point some 120, plus the strings it keeps; the document kept with a board, a few kB.
# And room for the values GraphQL completed from them (schema.completion), at most
# MOST_SELECTIONS of each list: some 300 bytes an item for the page's selection; and for
# MOST_SLICES slices of it (8 bytes an item each: their completed values are slices too).
COMPLETED_BYTES = 300 * MOST_SELECTIONS + 8 * MOST_SLICES
ROW_BYTES = 1_200 + COMPLETED_BYTES
POINT_BYTES = 250 + COMPLETED_BYTES
BOARD_BYTES = 6_000
NAMES_BYTES_PER_NAME = 100
# A benchmark's own fields as its type holds them (its metric, source and lab, the strings it
# keeps from being freed) some 6,000 bytes; a stored leader's row some 3,000, with its share of
# the summary it keeps (synthetic catalog rows).
FIELDS_BYTES = 6_000
PLACE_BYTES = 3_000
KEPT_BOARD_BYTES = 48 * 1024 * 1024
KEPT_NAMES_BYTES = 8 * 1024 * 1024
KEPT_FIELDS_BYTES = 8 * 1024 * 1024

Version = tuple[str, int, Hashable, str]
T = TypeVar("T")


def identity(doc: BenchmarkSummaryDoc | ModelDoc) -> Version:
    """What tells one written version of a document from the others in its store: slug,
    revision, and when and by whom it was last changed."""
    return doc["slug"], doc["revision"], doc["updated_at"], doc["updated_by"]


@dataclass(frozen=True, eq=False)
class DerivedBoard:
    """A benchmark's leaderboard with its figures, each computed when first asked for and then
    kept with it. Every request showing this version of the benchmark shares it: nothing here
    depends on the request."""

    board: Board
    benchmark: BenchmarkDoc  # without its history: the rows need no more

    @cached_property
    def rows(self) -> Kept[LeaderboardRow]:
        return Kept(
            LeaderboardRow.from_row(row, self.board, self.benchmark) for row in self.board.rows
        )

    def row_of(self, row: Row) -> LeaderboardRow:
        return self.rows[row.rank - 1]  # ranks are 1-based positions

    @cached_property
    def leader(self) -> LeaderboardRow | None:
        found = leader(self.board.rows)
        return None if found is None else self.row_of(found)

    @cached_property
    def tracked_leader(self) -> LeaderboardRow | None:
        found = tracked_leader(self.board.rows)
        return None if found is None else self.row_of(found)

    @cached_property
    def leaders(self) -> Kept[LeaderboardRow]:
        return Kept(self.row_of(row) for row in self.board.leaders())

    @cached_property
    def tracked_leaders(self) -> Kept[LeaderboardRow]:
        return Kept(self.row_of(row) for row in self.board.tracked_leaders())

    @cached_property
    def tracked_model_count(self) -> int:
        return tracked_model_count(self.board.rows)

    @cached_property
    def strongest_model_tested(self) -> Model | None:
        return Model.from_optional_doc(strongest_model_tested(self.board.rows))

    @cached_property
    def last_model_added(self) -> Model | None:
        return Model.from_optional_doc(last_model_added(self.board.rows))


def _board_size(derived: DerivedBoard) -> int:
    return BOARD_BYTES + ROW_BYTES * len(derived.board.rows)


def _points_size(points: Kept[ScorePoint]) -> int:
    return BOARD_BYTES + POINT_BYTES * len(points)


def _names_size(names: tuple[str, ...]) -> int:
    return NAMES_BYTES_PER_NAME * (1 + len(names))


class KeptBoards:
    """What one store's documents derive to, kept in memory bounded by its bytes."""

    def __init__(self) -> None:
        self.boards: BoundedCache[Hashable, DerivedBoard] = BoundedCache(
            KEPT_BOARD_BYTES, _board_size
        )
        self.names: BoundedCache[Hashable, tuple[str, ...]] = BoundedCache(
            KEPT_NAMES_BYTES, _names_size
        )
        self.points: BoundedCache[Hashable, Kept[ScorePoint]] = BoundedCache(
            KEPT_BOARD_BYTES // 4, _points_size
        )
        self.fields: BoundedCache[Hashable, Mapping[str, Any]] = BoundedCache(
            KEPT_FIELDS_BYTES, lambda _: FIELDS_BYTES
        )
        self.places: BoundedCache[Hashable, LeaderboardRow] = BoundedCache(
            KEPT_FIELDS_BYTES, lambda _: PLACE_BYTES
        )


_kept: "WeakKeyDictionary[Store, KeptBoards]" = WeakKeyDictionary()


def kept_for(store: Store) -> KeptBoards:
    """What is kept for the documents of `store` (gone with it): of the store itself, beneath
    the views of it a request or the server reads through (each holds it as `inner`: a
    request's noting what it reads, the server's timing its calls), which live shorter."""
    store = underlying(store)
    found = _kept.get(store)
    if found is None:
        found = _kept[store] = KeptBoards()
    return found


def own_fields(
    doc: BenchmarkSummaryDoc,
    kept: KeptBoards | None,
    read: Callable[[BenchmarkSummaryDoc], dict[str, Any]],
) -> Mapping[str, Any]:
    """The benchmark's own fields, as `read` reads them off its document (its enums, metric,
    source and lab made into the schema's types): kept per version of the benchmark, if
    `kept`. A page shows a dozen benchmarks (its family, its siblings): reading them anew is
    the most a page's own code spends. What is kept is shared: never changed in place."""
    if kept is None:
        return read(doc)
    key = identity(doc)
    found = kept.fields.get(key)
    if found is None:
        found = read(doc)
        kept.fields.put(key, found)
    return found


def placed_row(
    doc: BenchmarkSummaryDoc, place: PlaceDoc, model: ModelDoc | None, kept: KeptBoards | None
) -> LeaderboardRow:
    """A leader stored with the benchmark's summary as a row, with its tracked model as it is
    now: kept per version of the benchmark and of the model, if `kept`."""
    if kept is None:
        return LeaderboardRow.from_place(place, model, doc)
    # Stored leaders are placed anew at the same revision when the tracked models change
    # (editing.workspace): the place itself is in the key, its entry by name, setting and score.
    entry = place["entry"]
    key = (
        identity(doc),
        _version_or_none(model),
        (place["rank"], place["best"], place["worst"], place["tied_with_leader"]),
        (entry["model_name"], entry["setting"], entry["score"]),
    )
    found = kept.places.get(key)
    if found is None:
        found = LeaderboardRow.from_place(place, model, doc)
        kept.places.put(key, found)
    return found


def names_of(doc: BenchmarkDoc, kept: KeptBoards | None) -> tuple[str, ...]:
    """The lookup keys of the model names its entries list, each once, in order (kept per
    version of the benchmark, if `kept`)."""
    return _names(doc["entries"], kept, ("entries", *identity(doc)))


def history_names_of(doc: BenchmarkDoc, kept: KeptBoards | None) -> tuple[str, ...]:
    """The same for every read of its history."""
    return _names(entries_of(doc.get("history", [])), kept, ("history", *identity(doc)))


def _names(entries: list[EntryDoc], kept: KeptBoards | None, key: Hashable) -> tuple[str, ...]:
    names = None if kept is None else kept.names.get(key)
    if names is None:
        names = tuple(dict.fromkeys(model_key(entry["model_name"]) for entry in entries))
        if kept is not None:
            kept.names.put(key, names)
    return names


def derived_board(
    doc: BenchmarkDoc, tracked: TrackedModels, kept: KeptBoards | None
) -> DerivedBoard:
    """The benchmark's derived leaderboard, with `tracked` holding (at least) the tracked
    models its entries name: kept (if `kept`, for a document read from its store), or computed
    now."""
    if kept is None:
        return _derived(doc, tracked)
    return _kept_under(kept.boards, doc, tracked, names_of(doc, kept), _derived)


def scores_over_time(
    doc: BenchmarkDoc, tracked: TrackedModels, kept: KeptBoards | None
) -> Kept[ScorePoint]:
    """Every result its history (in `doc`) records, oldest first, with `tracked` holding the
    tracked models the history names: kept as `derived_board` keeps a leaderboard."""
    if kept is None:
        return _points(doc, tracked)
    return _kept_under(kept.points, doc, tracked, history_names_of(doc, kept), _points)


def _kept_under(
    cache: BoundedCache[Hashable, T],
    doc: BenchmarkDoc,
    tracked: TrackedModels,
    names: Iterable[str],
    compute: Callable[[BenchmarkDoc, TrackedModels], T],
) -> T:
    """What `compute` derives from `doc`, kept under the versions of the benchmark and of the
    tracked models its `names` name."""
    key = (identity(doc), tuple(_version_or_none(tracked.get(name)) for name in names))
    found = cache.get(key)
    if found is None:
        found = compute(doc, tracked)
        cache.put(key, found)
    return found


def _points(doc: BenchmarkDoc, tracked: TrackedModels) -> Kept[ScorePoint]:
    results = results_ever_recorded(doc.get("history", []), tracked)
    return Kept(ScorePoint.from_point(p) for p in points_over_time(results, tracked=tracked))


def _derived(doc: BenchmarkDoc, tracked: TrackedModels) -> DerivedBoard:
    metric = doc["metric"]
    higher_is_better = metric["higher_is_better"]
    rows = leaderboard(doc["entries"], higher_is_better=higher_is_better, tracked=tracked)
    board = Board(rows, unit=metric["unit"], higher_is_better=higher_is_better)
    held = cast(BenchmarkDoc, {name: value for name, value in doc.items() if name != "history"})
    return DerivedBoard(board, held)


def _version_or_none(model: ModelDoc | None) -> Version | None:
    return None if model is None else identity(model)
