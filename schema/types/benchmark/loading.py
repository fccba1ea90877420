"""How a benchmark loads: what it was read with, and how it reads the rest when a field needs it.

A catalog row comes as a summary, a page with its neighbourhood and the tracked models its rows
name; a field that needs more (the whole leaderboard, the history, the benchmarks around it)
reads it through the request's loaders, once for every benchmark that asks. Such a field
answers at once when it has what it needs, and with a coroutine (which GraphQL awaits) only
when it must read: an async resolver costs a page executed anew (some twenty fields) 8%.
"""

from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from inspect import isawaitable
from types import MappingProxyType
from typing import Any, TypeVar, cast

from resolvers import (
    Board,
    ReportFilter,
    Row,
    TrackedModels,
    entries_of,
    family_root,
    index_by_key,
    leader,
    leaderboard,
    model_key,
    read_as_of,
    reported_entries,
    results_ever_recorded,
)
from resolvers import scores_over_time as points_over_time
from schema.context import Context
from schema.types.benchmark.derived import (
    DerivedBoard,
    KeptBoards,
    derived_board,
    history_names_of,
    kept_for,
    names_of,
    own_fields,
    placed_row,
    scores_over_time,
)
from schema.types.benchmark.parts import EVERYTHING, report_filter
from schema.types.leaderboard import LeaderboardRow, ScorePoint
from schema.vocabulary import Kept, SourceKind, slice_size
from store import (
    BenchmarkDoc,
    BenchmarkSummaryDoc,
    Date,
    EntryDoc,
    LeadersDoc,
    ModelDoc,
    Neighbourhood,
    NeighbourhoodRequest,
    PlaceDoc,
    ReadDoc,
)

T = TypeVar("T")

NO_MODELS: Mapping[str, ModelDoc] = MappingProxyType({})
NO_LEADERS: LeadersDoc = {"leader": None, "tracked_leader": None}

# Siblings read with a benchmark's neighbourhood: a page of them (20, the default `first`) needs
# no query of its own. A page reads those it shows (schema.types.selections.siblings_shown), up
# to these.
SIBLINGS_WITH_A_BENCHMARK = 20

RowsAsked = tuple[Date | None, int, list[SourceKind] | None, bool | None]
"""What `leaderboard`, `leaders` and `trackedLeaders` are asked: `asOf`, `first`, `reportedBy`
and `excludeSelfReported`."""


def deferred(coroutine: Coroutine[Any, Any, T]) -> T:
    """`coroutine` given where its answer is due: GraphQL awaits what a resolver returns when
    it is awaitable, so a field may answer now or later with one declared type."""
    return cast(T, coroutine)


async def settled(found: T) -> T:
    """`found`, awaited if it is a `deferred` answer: GraphQL awaits the coroutine a resolver
    returns, not one that coroutine returns in turn."""
    if isawaitable(found):
        return cast(T, await found)
    return found


@dataclass(eq=False)
class Loaded:
    """What a benchmark was read with. `neighbourhood`, if given, comes with the tracked models
    its benchmarks name in `tracked`; `history_tracked`: so do the entries of every read in
    `doc`'s history. `stored`: `doc` was read from the store as it is there (not made by a
    change), so its derived leaderboard may be kept for other requests. `leader_models`: the
    models stored leaders name, by slug, where loaded with it (a catalog row's own, or a page's
    family's and siblings', which its members are given)."""

    # The whole document, or for a catalog row its summary until a field needs the rest.
    doc: BenchmarkSummaryDoc
    tracked: TrackedModels
    context: Context
    neighbourhood: Neighbourhood | None = None
    history_tracked: bool = False
    stored: bool = False
    leader_models: Mapping[str, ModelDoc] = field(default_factory=lambda: NO_MODELS)

    @property
    def whole(self) -> BenchmarkDoc:
        """The whole document: only once `with_whole` loaded it, for a catalog row."""
        assert "entries" in self.doc, "a field read a summary's leaderboard: use with_whole"
        return cast(BenchmarkDoc, self.doc)

    @cached_property
    def derived(self) -> DerivedBoard:
        return derived_board(self.whole, self.tracked, self.kept())

    @property
    def board(self) -> Board:
        return self.derived.board

    def kept(self) -> KeptBoards | None:
        return kept_for(self.context.store) if self.stored else None

    def own_fields(
        self, read: Callable[[BenchmarkSummaryDoc], dict[str, Any]]
    ) -> Mapping[str, Any]:
        """The benchmark's own fields, as `read` reads them off its document (kept if
        `stored`)."""
        return own_fields(self.doc, self.kept(), read)

    def with_whole(self, answer: Callable[[], T]) -> T:
        """`answer` at once if this benchmark came whole; else once its whole document is
        loaded, through the request's loader: one store call for every row that asks."""
        if "entries" in self.doc:
            return answer()

        async def once_loaded() -> T:
            await self._load_whole()
            return await settled(answer())

        return deferred(once_loaded())

    async def _load_whole(self) -> None:
        whole = await self.context.loaders.benchmark_by_slug.load(self.doc["slug"])
        if "entries" in self.doc:  # another field loaded it meanwhile
            return
        if whole is None:  # gone since its summary was read: nothing more to show
            whole = cast(BenchmarkDoc, {**self.doc, "entries": [], "model_card_reports": []})
        tracked = await self.context.loaders.tracked_models_of_entries(
            whole["entries"], self.tracked
        )
        if "entries" not in self.doc:
            self.doc, self.tracked = whole, tracked

    def stored_leaders(self) -> LeadersDoc | None:
        """The leaders a catalog row's summary holds (None for a whole document, whose
        leaderboard is derived and kept: see `derived`, or for a summary written before
        leaders were stored)."""
        return None if "entries" in self.doc else self.doc.get("leaders")

    def placed(self, place: PlaceDoc | None) -> LeaderboardRow | None:
        """A stored leader as a row, with its tracked model as it is now (loaded with every
        other row's in one store call)."""
        if place is None:
            return None
        slug = place["model"]
        if slug is None:
            return placed_row(self.doc, place, None, self.kept())
        if slug in self.leader_models:
            return placed_row(self.doc, place, self.leader_models[slug], self.kept())

        async def with_model() -> LeaderboardRow:
            model = await self.context.loaders.model_by_slug.load(slug)
            return placed_row(self.doc, place, model, self.kept())

        return deferred(with_model())

    def with_leader_row(self, answer: Callable[[Row | None], T]) -> T:
        """`answer` from the leader's row, for what its entry alone decides (headroom): stored,
        or read off the whole leaderboard."""
        stored = self.stored_leaders()
        if stored is None:
            return self.with_whole(lambda: answer(leader(self.board.rows)))
        place = stored["leader"]
        if place is None:
            return answer(None)
        entry = place["entry"]
        return answer(
            Row(rank=place["rank"], model_name=entry["model_name"], model=None, entry=entry)
        )

    def member(self, doc: BenchmarkSummaryDoc) -> "Loaded":
        """A benchmark of the neighbourhood, as its summary, the models its stored leaders
        name known to this one."""
        return Loaded(doc, {}, self.context, stored=True, leader_models=self.leader_models)

    def rows_on(
        self,
        asked: RowsAsked,
        pick: Callable[[Board], list[Row]],
        kept: Callable[[DerivedBoard], Kept[LeaderboardRow]],
    ) -> list[LeaderboardRow]:
        """The first rows `pick` takes from the leaderboard (now or as of a date), of the
        entries the report filter lets through: what `leaderboard`, `leaders` and
        `trackedLeaders` answer. The whole leaderboard now is the derived one, kept: `kept`
        takes the same rows from it."""
        as_of, first, reported_by, exclude_self_reported = asked
        size = slice_size("first", first)
        if size == 0:  # priced as none: computed as none
            return []
        only = report_filter(reported_by, exclude_self_reported)
        if as_of is None and only.everything:
            return self.with_whole(lambda: kept(self.derived).head(size))
        return self.on(
            as_of,
            lambda board: [LeaderboardRow.from_row(r, board, self.doc) for r in pick(board)[:size]],
            only,
        )

    def row(self, board: Board, row: Row | None) -> LeaderboardRow | None:
        return LeaderboardRow.from_optional_row(row, board, self.doc)

    def board_of(self, rows: list[Row]) -> Board:
        metric = self.doc["metric"]
        return Board(rows, unit=metric["unit"], higher_is_better=metric["higher_is_better"])

    def on(self, as_of: Date | None, answer: Callable[[Board], T], only: ReportFilter) -> T:
        """`answer` from the leaderboard now, or from the leaderboard as it stood on `as_of`;
        of the entries `only` lets through. The latter needs the history, so it is deferred."""
        if as_of is None:
            if only.everything:
                return self.with_whole(lambda: answer(self.board))
            return self.with_whole(
                lambda: answer(
                    self.board_of(self.rows_of(self.whole["entries"], self.tracked, only))
                )
            )

        async def on_that_day() -> T:
            return answer(self.board_of(await self._rows_as_of(as_of, only)))

        return deferred(on_that_day())

    async def _rows_as_of(self, as_of: Date, only: ReportFilter) -> list[Row]:
        """The leaderboard as it stood on `as_of`, its models tracked as of today."""
        read = read_as_of(await self.history(), as_of)
        entries = read["entries"] if read is not None else []
        tracked = await self.context.loaders.tracked_models_of_entries(entries, self.tracked)
        return self.rows_of(entries, tracked, only)

    def rows_of(
        self, entries: list[EntryDoc], tracked: TrackedModels, only: ReportFilter = EVERYTHING
    ) -> list[Row]:
        """The leaderboard of the entries `only` lets through (a model's best among them)."""
        if not only.everything:
            entries = reported_entries(entries, self.doc, tracked, only)
        higher_is_better = self.doc["metric"]["higher_is_better"]
        return leaderboard(entries, higher_is_better=higher_is_better, tracked=tracked)

    def scores_over_time(self, count: int) -> list[ScorePoint]:
        """The newest `count` results its history records, oldest first: kept, from a history
        that came with its tracked models (a page), else read now."""
        if self.history_tracked:
            return scores_over_time(self.whole, self.tracked, self.kept()).tail(count)

        async def once_loaded() -> list[ScorePoint]:
            history = await self.history()
            tracked = await self.tracked_in(history)
            results = results_ever_recorded(history, tracked)
            points = points_over_time(results, tracked=tracked)
            return [ScorePoint.from_point(point) for point in points[len(points) - count :]]

        return deferred(once_loaded())

    async def tracked_in(self, history: list[ReadDoc]) -> TrackedModels:
        """The tracked models any of these reads names."""
        return await self.context.loaders.tracked_models_of_entries(
            entries_of(history), self.tracked
        )

    async def history(self) -> list[ReadDoc]:
        """Its reads, oldest first; loaded when this document came without them."""
        if "history" not in self.doc:
            whole = await self.context.loaders.benchmark_by_slug.load(self.doc["slug"])
            return [] if whole is None else whole.get("history", [])
        return self.whole["history"]

    def around(self, answer: Callable[[Neighbourhood], T]) -> T:
        """`answer` from the benchmarks around this one: at once if they came with it (a page),
        else once they are loaded. An answer may itself read more (siblings past those loaded):
        it is settled here."""
        if self.neighbourhood is not None:
            return answer(self.neighbourhood)

        async def once_loaded() -> T:
            return await settled(answer(await self._neighbourhood()))

        return deferred(once_loaded())

    async def _neighbourhood(self) -> Neighbourhood:
        """The neighbourhood, read now, with the models its benchmarks' stored leaders name."""
        if self.neighbourhood is None:
            request = NeighbourhoodRequest(
                family=family_root(self.doc),
                category=self.doc["category"]["slug"],
                siblings_limit=SIBLINGS_WITH_A_BENCHMARK,
            )
            around = await self.context.loaders.neighbourhood.load(request)
            found = await leader_models(self.context, members(around))
            self.leader_models = {**self.leader_models, **found}
            self.neighbourhood = around
        return self.neighbourhood


def members(around: Neighbourhood) -> list[BenchmarkSummaryDoc]:
    return [*around.family, *around.siblings]


def stored_leaders(summaries: list[BenchmarkSummaryDoc]) -> list[PlaceDoc]:
    """The stored leaders of these benchmarks that are tracked models."""
    stored = [doc.get("leaders") or NO_LEADERS for doc in summaries]
    places = [place for doc in stored for place in (doc["leader"], doc["tracked_leader"])]
    return [place for place in places if place is not None and place["model"] is not None]


async def leader_models(
    context: Context, summaries: list[BenchmarkSummaryDoc]
) -> dict[str, ModelDoc]:
    """The tracked models the stored leaders of these benchmarks name, by slug (one load)."""
    slugs = sorted({place["model"] for place in stored_leaders(summaries) if place["model"]})
    found = await context.loaders.model_by_slug.load_many(slugs)
    return {model["slug"]: model for model in found if model is not None}


async def page_loaded(context: Context, slug: str, siblings: int) -> Loaded | None:
    """A benchmark with what its page shows around it, read in one go: its neighbourhood (as
    summaries, with its first `siblings` siblings), and the tracked models named by its rows,
    its history and its neighbours' stored leaders (one load). Its family, first siblings and
    scores over time then resolve without waiting."""
    found = await context.store.benchmark_with_neighbourhood(slug, siblings)
    if found is None:
        return None
    doc, around = found
    kept = kept_for(context.store)
    names = {*names_of(doc, kept), *history_names_of(doc, kept)}
    # A stored leader's model is found by its entry's name as any row's is (and by its slug
    # later, should that name no longer lead to it).
    leaders = stored_leaders(members(around))
    names.update(model_key(place["entry"]["model_name"]) for place in leaders)
    # One store call for them all, past the per-key loader: its futures cost more than the
    # read (some 100 names on a synthetic page).
    models = await context.store.models_by_keys(list(names))
    return Loaded(
        doc,
        index_by_key(models),
        context,
        around,
        history_tracked="history" in doc,
        stored=True,
        leader_models={model["slug"]: model for model in models},
    )


async def summaries_loaded(
    context: Context, summaries: list[BenchmarkSummaryDoc], *, with_leaders: bool
) -> list[Loaded]:
    """A catalog's rows: each answers from its summary, its stored leaders with their models
    as they are now, and loads the rest only for a field that needs it. `with_leaders`: the
    rows show leaders, so their models are loaded now, in one call, and the leaders resolve
    without waiting (200 awaited fields cost a catalog page more than the call)."""
    models = await leader_models(context, summaries) if with_leaders else {}
    return [Loaded(doc, {}, context, stored=True, leader_models=models) for doc in summaries]


async def docs_loaded(
    context: Context, docs: list[BenchmarkDoc], *, stored: bool = False
) -> list[Loaded]:
    """These whole documents, their tracked models loaded in one batch; `stored`: read from
    the store as they are there (see `Loaded`)."""
    tracked = await context.loaders.tracked_models(docs)
    return [Loaded(doc, tracked, context, stored=stored) for doc in docs]
