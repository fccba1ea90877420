"""The Benchmark type: stored data, and the almanac's rules computed over it."""

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from enum import Enum
from functools import cached_property
from inspect import isawaitable
from types import MappingProxyType
from typing import Annotated, Any, Self, TypeVar, cast

import strawberry

from editing import MAX_MODEL_CARD_REPORTS, MAX_TRACKS
from resolvers import family as family_rules
from resolvers import headroom as headroom_rules
from resolvers import leaderboard as rules
from resolvers.contamination import when_test_set_published
from resolvers.history import changes_by_read, entries_of, read_as_of, results_ever_recorded
from resolvers.ranking import Board
from resolvers.reporting import ReportFilter, reported_entries
from resolvers.tracking import TrackedModels, index_by_key, model_key
from schema.context import Context
from schema.types.derived import (
    DerivedBoard,
    KeptBoards,
    derived_board,
    history_names_of,
    kept_for,
    names_of,
    scores_over_time,
)
from schema.types.history import LeaderboardRead
from schema.types.lab import Lab
from schema.types.leaderboard import LeaderboardRow, ScorePoint
from schema.types.model import Model
from schema.vocabulary import (
    COMPUTED,
    RECOMPUTED,
    AnswerFormat,
    Connection,
    Kind,
    Level,
    MetricUnit,
    Revised,
    Scoring,
    SliceArgument,
    SlugNode,
    SourceKind,
    Status,
    TaskAvailability,
    at_most,
    connection,
    page,
    page_of,
    slice_size,
    sliced_by,
)
from store import (
    BenchmarkDoc,
    BenchmarkSummaryDoc,
    CategoryCountDoc,
    Date,
    EntryDoc,
    LeadersDoc,
    ModelDoc,
    Neighbourhood,
    NeighbourhoodRequest,
    PlaceDoc,
    ReadDoc,
    SourceDoc,
    YearMonth,
)

NO_MODELS: Mapping[str, ModelDoc] = MappingProxyType({})
NO_LEADERS: LeadersDoc = {"leader": None, "tracked_leader": None}

E = TypeVar("E", bound=Enum)
T = TypeVar("T")

# Siblings read with a benchmark's neighbourhood: a page of them (20, the default `first`) needs
# no query of its own. A page reads those it shows (schema.types.selections.siblings_shown), up
# to these.
SIBLINGS_WITH_A_BENCHMARK = 20
DEFAULT_LEADERBOARD_ROWS = 100

AsOf = Annotated[
    Date | None,
    strawberry.argument(
        directives=[RECOMPUTED],
        description=(
            "The leaderboard as it stood on this day: the last read on or before it (empty "
            "before the first read). Which models are tracked, and so the tracked leader, is "
            "today's list of tracked models, not that day's."
        ),
    ),
]
DEFAULT_SCORE_POINTS = 100
DEFAULT_LEADERS = 10
EVERYTHING = ReportFilter()


@strawberry.type(description="How a benchmark scores models.")
class Metric:
    name: str = strawberry.field(description="What is measured, e.g. `Executable rate`.")
    unit: MetricUnit = strawberry.field(description="The unit of scores, e.g. PERCENT.")
    higher_is_better: bool = strawberry.field(description="Whether a higher score is better.")


@strawberry.type(description="Where a benchmark's leaderboard is read from.")
class Source:
    name: str = strawberry.field(
        description="E.g. `Official Code Interpreter Benchmark General leaderboard`."
    )
    url: str | None = strawberry.field(description="Its web address, if it has one.")
    kind: SourceKind | None = strawberry.field(
        description=(
            "Who reports its scores (an entry may say otherwise: `LeaderboardRow.reportedBy`); "
            "null if unknown."
        )
    )
    lab: Lab | None = strawberry.field(
        description="For a lab's report (MODEL_DEVELOPER), the lab that wrote it, if known."
    )

    @classmethod
    def from_doc(cls, doc: SourceDoc | None) -> "Source | None":
        if doc is None:
            return None
        kind = doc.get("kind")
        return cls(
            name=doc["name"],
            url=doc["url"],
            kind=None if kind is None else SourceKind[kind],
            lab=Lab.from_doc(doc.get("lab")),
        )


ReportedBy = Annotated[
    list[SourceKind] | None,
    strawberry.argument(
        directives=[RECOMPUTED],
        description=(
            "Only scores reported by one of these kinds (`LeaderboardRow.reportedBy`); a score "
            "whose reporter is unknown is left out. Ranks, ranges and leaders are those of "
            "the rows kept."
        ),
    ),
]
ExcludeSelfReported = Annotated[
    bool | None,
    strawberry.argument(
        directives=[RECOMPUTED],
        description="True: leave out scores known to be self-reported (`selfReported: true`).",
    ),
]


@strawberry.type(description="A group of benchmarks that test the same ability, e.g. Tool use.")
class Category:
    slug: str = strawberry.field(description="Stable URL slug, e.g. `tool-use`.")
    name: str = strawberry.field(description="E.g. `Tool use`.")
    benchmark_count: int = strawberry.field(description="How many benchmarks it holds.")

    @classmethod
    def from_doc(cls, doc: CategoryCountDoc) -> Self:
        return cls(slug=doc["slug"], name=doc["name"], benchmark_count=doc["benchmark_count"])


@strawberry.type(description="A headline result a lab reported for a model in its model card.")
class ModelCardReport:
    model_name: str = strawberry.field(description="The model, named as the lab names it.")
    score: float = strawberry.field(description="The score the lab reported.")
    reported_on: Date | None = strawberry.field(description="When the model card was published.")
    url: str | None = strawberry.field(description="The model card or launch post.")


@strawberry.type(description="The model-card reports found for one benchmark.")
class ModelCardReports:
    total_count: int = strawberry.field(description="How many reports were found.")
    nodes: list[ModelCardReport] = strawberry.field(
        description="The reports.", directives=[at_most(MAX_MODEL_CARD_REPORTS)]
    )


@strawberry.type(
    description=(
        "An AI benchmark as its almanac page shows it: what it measures, who made it, its "
        "leaderboard (best score per model), the leaders, and the benchmarks around it. "
        "A parent record (e.g. Code Interpreter Benchmark) is a benchmark too: its tracks are "
        "benchmarks whose `parent` it is, and its own leaderboard keeps combined scores."
    )
)
class Benchmark(SlugNode, Revised):
    slug: str = strawberry.field(description="Stable URL slug; never reused.")

    name: str = strawberry.field(description="Its name as the site shows it.")
    description: str | None = strawberry.field(
        description="What the tasks are and how the score is computed."
    )
    note: str | None = strawberry.field(
        description="An editorial note shown with the benchmark, e.g. on a parent record."
    )
    metric: Metric = strawberry.field(description="What the score measures, and its unit.")
    made_by: Lab | None = strawberry.field(description="The lab that made the benchmark.")
    released_on: YearMonth | None = strawberry.field(description="Release month.")
    kind: Kind | None = strawberry.field(description="What it mainly exercises; null if unknown.")
    level: Level | None = strawberry.field(description="How hard its tasks are; null if unknown.")
    scoring: Scoring | None = strawberry.field(description="How answers are scored.")
    answer_format: AnswerFormat | None = strawberry.field(description="The form answers take.")
    task_availability: TaskAvailability | None = strawberry.field(
        description="Whether its tasks are published."
    )
    status: Status = strawberry.field(description="In use, or saturated or retired.")
    prominence: int = strawberry.field(
        description="Editorial order within its category: higher is shown first."
    )
    track_position: int | None = strawberry.field(
        description="Its place among its parent's tracks (1 first); null if not a track."
    )
    ceiling: float | None = strawberry.field(
        description=(
            "The highest score the benchmark can meaningfully show (label noise, ambiguous "
            "tasks); charts mark it as 'Near the ceiling'."
        )
    )
    source: Source | None = strawberry.field(description="Where the leaderboard is read from.")
    task_count: int | None = strawberry.field(
        description="How many tasks its test set holds, where its source says so."
    )
    scores_refreshed_on: Date | None = strawberry.field(
        description="When the leaderboard was last read from its source."
    )

    # The whole document, or for a catalog row its summary until a field needs the rest.
    doc: strawberry.Private[BenchmarkSummaryDoc]
    tracked: strawberry.Private[TrackedModels]
    neighbourhood: strawberry.Private[Neighbourhood | None]
    history_tracked: strawberry.Private[bool]
    stored: strawberry.Private[bool]
    context: strawberry.Private[Context]
    # The models stored leaders name, by slug, where loaded with it: a catalog row's own, or
    # (a page's) its family's and siblings', which its members are given.
    leader_models: strawberry.Private[Mapping[str, ModelDoc]]

    @classmethod
    def from_doc(
        cls,
        doc: BenchmarkSummaryDoc,
        tracked: TrackedModels,
        context: Context,
        neighbourhood: Neighbourhood | None = None,
        *,
        history_tracked: bool = False,
        stored: bool = False,
        leader_models: Mapping[str, ModelDoc] = NO_MODELS,
    ) -> Self:
        """`neighbourhood`, if given, comes with the tracked models its benchmarks name in
        `tracked`; `history_tracked`: so do the entries of every read in `doc`'s history.
        `stored`: `doc` was read from the store as it is there (not made by a change), so its
        derived leaderboard may be kept for other requests. A summary (a catalog row) is
        answered from as far as it goes; a field that needs more loads the whole document."""
        metric, source = doc["metric"], doc["source"]
        return cls(
            slug=doc["slug"],
            name=doc["name"],
            description=doc["description"],
            note=doc["note"],
            metric=Metric(
                name=metric["name"],
                unit=MetricUnit[metric["unit"]],
                higher_is_better=metric["higher_is_better"],
            ),
            made_by=Lab.from_doc(doc["made_by"]),
            released_on=doc["released_on"],
            kind=_maybe(Kind, doc["kind"]),
            level=_maybe(Level, doc["level"]),
            scoring=_maybe(Scoring, doc["scoring"]),
            answer_format=_maybe(AnswerFormat, doc["answer_format"]),
            task_availability=_maybe(TaskAvailability, doc["task_availability"]),
            status=Status[doc["status"]],
            prominence=doc["prominence"],
            track_position=doc["track_position"],
            ceiling=doc["ceiling"],
            task_count=doc.get("task_count"),
            source=Source.from_doc(source),
            scores_refreshed_on=doc["scores_refreshed_on"],
            revision=doc["revision"],
            updated_at=doc["updated_at"],
            updated_by=doc["updated_by"],
            doc=doc,
            tracked=tracked,
            neighbourhood=neighbourhood,
            history_tracked=history_tracked,
            stored=stored,
            context=context,
            leader_models=leader_models,
        )

    @classmethod
    async def resolve_nodes(  # type: ignore[override]
        cls, *, info: strawberry.Info[Context], node_ids: Iterable[str], required: bool = False
    ) -> list[Self | None]:
        slugs = list(node_ids)
        docs = await info.context.loaders.benchmark_by_slug.load_many(slugs)
        found = [doc for doc in docs if doc is not None]
        by_slug = {b.slug: b for b in await benchmarks_from_docs(info.context, found, stored=True)}
        return [by_slug.get(slug) for slug in slugs]  # type: ignore[misc]

    @cached_property
    def derived(self) -> DerivedBoard:
        return derived_board(self.whole, self.tracked, self._kept())

    @property
    def whole(self) -> BenchmarkDoc:
        """The whole document: only once `_with_whole` loaded it, for a catalog row."""
        assert "entries" in self.doc, "a field read a summary's leaderboard: use _with_whole"
        return cast(BenchmarkDoc, self.doc)

    def _with_whole(self, answer: Callable[[], T]) -> T:
        """`answer` at once if this benchmark came whole; else once its whole document is
        loaded (a coroutine, which GraphQL awaits). A catalog row comes as a summary, and only
        a field that needs its leaderboard loads it, through the request's loader: one store
        call for every row that asks."""
        if "entries" in self.doc:
            return answer()

        async def once_loaded() -> T:
            await self._load_whole()
            found: Any = answer()
            return await found if isawaitable(found) else found  # type: ignore[no-any-return]

        awaited: Any = once_loaded()
        return awaited  # type: ignore[no-any-return]

    async def _load_whole(self) -> None:
        whole = await self.context.loaders.benchmark_by_slug.load(self.slug)
        if "entries" in self.doc:  # another field loaded it meanwhile
            return
        if whole is None:  # gone since its summary was read: nothing more to show
            whole = cast(BenchmarkDoc, {**self.doc, "entries": [], "model_card_reports": []})
        tracked = await self.context.loaders.tracked_models_of_entries(
            whole["entries"], self.tracked
        )
        if "entries" not in self.doc:
            self.doc, self.tracked = whole, tracked

    def _stored_leaders(self) -> LeadersDoc | None:
        """The leaders a catalog row's summary holds (None for a whole document, whose
        leaderboard is derived and kept: see `derived`, or for a summary written before
        leaders were stored)."""
        return None if "entries" in self.doc else self.doc.get("leaders")

    def _placed(self, place: PlaceDoc | None) -> LeaderboardRow | None:
        """A stored leader as a row, with its tracked model as it is now (loaded with every
        other row's in one store call)."""
        if place is None:
            return None
        slug = place["model"]
        if slug is None:
            return LeaderboardRow.from_place(place, None, self.doc)
        if slug in self.leader_models:
            return LeaderboardRow.from_place(place, self.leader_models[slug], self.doc)

        async def with_model() -> LeaderboardRow:
            model = await self.context.loaders.model_by_slug.load(slug)
            return LeaderboardRow.from_place(place, model, self.doc)

        awaited: Any = with_model()
        return awaited  # type: ignore[no-any-return]

    def _leader_row(self) -> rules.Row | None:
        """The leader's row, for what its entry alone decides (headroom): stored, or read off
        the whole leaderboard."""
        stored = self._stored_leaders()
        if stored is None:
            return rules.leader(self.rows)
        place = stored["leader"]
        if place is None:
            return None
        entry = place["entry"]
        return rules.Row(
            rank=place["rank"], model_name=entry["model_name"], model=None, entry=entry
        )

    def _with_leader_row(self, answer: Callable[[rules.Row | None], T]) -> T:
        if self._stored_leaders() is not None:
            return answer(self._leader_row())
        return self._with_whole(lambda: answer(self._leader_row()))

    def _kept(self) -> KeptBoards | None:
        return kept_for(self.context.store) if self.stored else None

    @property
    def rows(self) -> list[rules.Row]:
        return self.board.rows

    @property
    def board(self) -> Board:
        return self.derived.board

    def _board(self, rows: list[rules.Row]) -> Board:
        metric = self.doc["metric"]
        return Board(rows, unit=metric["unit"], higher_is_better=metric["higher_is_better"])

    def _row(self, board: Board, row: rules.Row | None) -> LeaderboardRow | None:
        return LeaderboardRow.from_optional_row(row, board, self.doc)

    @strawberry.field(
        directives=[sliced_by("first")],
        description=(
            "Best score per model from the benchmark's own leaderboard, best first, ties by "
            "model name A to Z. Where a model ran with several settings or harnesses, its best "
            "is kept. Rows of models we don't track have `tracked: false`. The first `first` "
            "rows (100 unless asked otherwise); `entryCount` says how many there are."
        ),
    )
    def leaderboard(
        self,
        first: SliceArgument = DEFAULT_LEADERBOARD_ROWS,
        as_of: AsOf = None,
        reported_by: ReportedBy = None,
        exclude_self_reported: ExcludeSelfReported = None,
    ) -> list[LeaderboardRow]:
        return self._rows_on(
            as_of, first, reported_by, exclude_self_reported, lambda b: b.rows, lambda d: d.rows
        )

    @strawberry.field(description="The row that tops the leaderboard, tracked or not.")
    def leader(self, as_of: AsOf = None) -> LeaderboardRow | None:
        if as_of is None:
            stored = self._stored_leaders()
            if stored is not None:
                return self._placed(stored["leader"])
            return self._with_whole(lambda: self.derived.leader)
        return self._on(as_of, lambda board: self._row(board, rules.leader(board.rows)))

    @strawberry.field(
        directives=[sliced_by("first")],
        description=(
            "Every row that could be first (`rankRange.best` 1), in leaderboard order: the "
            "leader and the rows tied with it (`tiedWithLeader`). With points only, the rows "
            "sharing the top score. The first `first` (10 unless asked otherwise)."
        ),
    )
    def leaders(
        self,
        first: SliceArgument = DEFAULT_LEADERS,
        as_of: AsOf = None,
        reported_by: ReportedBy = None,
        exclude_self_reported: ExcludeSelfReported = None,
    ) -> list[LeaderboardRow]:
        return self._rows_on(
            as_of, first, reported_by, exclude_self_reported, Board.leaders, lambda d: d.leaders
        )

    @strawberry.field(
        directives=[sliced_by("first")],
        description=(
            "Every tracked row that could be first among the tracked rows (ranked among them "
            "only), in leaderboard order; each row's `rank` and `rankRange` are its places on "
            "the whole leaderboard. The first `first` (10 unless asked otherwise)."
        ),
    )
    def tracked_leaders(
        self,
        first: SliceArgument = DEFAULT_LEADERS,
        as_of: AsOf = None,
        reported_by: ReportedBy = None,
        exclude_self_reported: ExcludeSelfReported = None,
    ) -> list[LeaderboardRow]:
        return self._rows_on(
            as_of,
            first,
            reported_by,
            exclude_self_reported,
            Board.tracked_leaders,
            lambda d: d.tracked_leaders,
        )

    @strawberry.field(
        description=(
            "When its test set became public: as recorded, else its release month. Scores of "
            "models released later are flagged `releasedAfterTestSet` (a heuristic)."
        )
    )
    def test_set_published_on(self) -> YearMonth | None:
        return when_test_set_published(self.doc)

    @strawberry.field(
        description=(
            "The distance from the leader's score to the ceiling (`ceiling`, else 100 for a "
            "PERCENT metric, 0 if lower is better), toward better; negative when the leader is "
            "past a recorded ceiling; null without a leader or a ceiling. Computed from the "
            "scores: `status` (e.g. SATURATED) stays an editor's call."
        )
    )
    def headroom(self) -> float | None:
        return self._with_leader_row(lambda leader: headroom_rules.headroom(self.doc, leader))

    @strawberry.field(
        description=(
            "Whether the leader's interval (or its score, without one) reaches the ceiling "
            "(as for `headroom`); null without a leader or a ceiling. A hint for `status`, "
            "which editors set."
        )
    )
    def near_ceiling(self) -> bool | None:
        return self._with_leader_row(lambda leader: headroom_rules.near_ceiling(self.doc, leader))

    @strawberry.field(
        description=(
            "The best row of a model we track. Untracked rows don't count toward leaders: "
            "wherever the site names a leader outside the page's own table, it is this one."
        )
    )
    def tracked_leader(self, as_of: AsOf = None) -> LeaderboardRow | None:
        if as_of is None:
            stored = self._stored_leaders()
            if stored is not None:
                return self._placed(stored["tracked_leader"])
            return self._with_whole(lambda: self.derived.tracked_leader)
        return self._on(as_of, lambda board: self._row(board, rules.tracked_leader(board.rows)))

    @strawberry.field(
        directives=[COMPUTED], description="How many rows the leaderboard has (one per model)."
    )
    def entry_count(self, as_of: AsOf = None) -> int:
        return self._on(as_of, lambda board: len(board.rows))

    @strawberry.field(
        directives=[COMPUTED], description="How many leaderboard rows are models we track."
    )
    def tracked_model_count(self) -> int:
        return self._with_whole(lambda: self.derived.tracked_model_count)

    @strawberry.field(
        directives=[COMPUTED],
        description="Of the tracked models on the leaderboard, the best on the capability index.",
    )
    def strongest_model_tested(self) -> Model | None:
        return self._with_whole(lambda: self.derived.strongest_model_tested)

    @strawberry.field(
        directives=[COMPUTED],
        description="Of the tracked models on the leaderboard, the newest by release month.",
    )
    def last_model_added(self) -> Model | None:
        return self._with_whole(lambda: self.derived.last_model_added)

    @strawberry.field(
        directives=[sliced_by("last")],
        description=(
            "Every result the almanac has recorded for it, in any read, one point each and "
            "oldest first: a model tested at several settings, or re-scored in a later read, "
            "appears more than once. A row read again with the same score is the same point. "
            "The newest `last` points (100 unless asked otherwise), still oldest first."
        ),
    )
    def scores_over_time(self, last: SliceArgument = DEFAULT_SCORE_POINTS) -> list[ScorePoint]:
        count = slice_size("last", last)
        if count == 0:  # priced as none: computed as none
            return []
        if self.history_tracked:
            points = scores_over_time(self.whole, self.tracked, self._kept())
            return points[len(points) - count :]

        async def once_loaded() -> list[ScorePoint]:
            history = await self._history()
            tracked = await self._tracked_in(history)
            results = results_ever_recorded(history, tracked)
            points = rules.scores_over_time(results, tracked=tracked)
            return [ScorePoint.from_point(point) for point in points[len(points) - count :]]

        awaited: Any = once_loaded()
        return awaited  # type: ignore[no-any-return]

    @strawberry.field(
        directives=[page_of()],
        description=(
            "Every read of its leaderboard, newest first: when, by whom, and what changed."
        ),
    )
    async def reads(
        self, info: strawberry.Info[Context], first: int = 20, after: str | None = None
    ) -> Connection[LeaderboardRead]:
        at = page(first, after)
        history = await self._history()
        changes = changes_by_read(history, await self._tracked_in(history))
        newest_first = list(zip(history, changes, strict=True))[::-1]
        return connection(
            [LeaderboardRead.from_read(read, changes) for read, changes in at.of(newest_first)],
            at=at,
            total_count=len(history),
        )

    @strawberry.field(description="Headline results labs reported for it in model cards.")
    def model_card_reports(self) -> ModelCardReports:
        def reports() -> ModelCardReports:
            found = self.whole["model_card_reports"]
            return ModelCardReports(
                total_count=len(found),
                nodes=[
                    ModelCardReport(
                        model_name=report["model_name"],
                        score=report["score"],
                        reported_on=report["reported_on"],
                        url=report["url"],
                    )
                    for report in found
                ],
            )

        return self._with_whole(reports)

    @strawberry.field(description="The parent record this benchmark is a track of, if any.")
    def parent(self, info: strawberry.Info[Context]) -> "Benchmark | None":
        def parent_in(around: Neighbourhood) -> Benchmark | None:
            found = family_rules.family(self.doc, around.family).parent
            return None if found is None else self._member(found)

        return self._around(info, parent_in)

    @strawberry.field(
        directives=[at_most(MAX_TRACKS)],
        description=(
            "The tracks of this benchmark's family, in the family's order: a parent's own "
            "tracks, or for a track every track of its parent (itself included). Empty for a "
            "benchmark without tracks or parent."
        ),
    )
    def tracks(self, info: strawberry.Info[Context]) -> list["Benchmark"]:
        return self._around(
            info,
            lambda around: [
                self._member(doc) for doc in family_rules.family(self.doc, around.family).tracks
            ],
        )

    @strawberry.field(description="The category it belongs to.")
    def category(self, info: strawberry.Info[Context]) -> Category:
        category = self.doc["category"]
        return self._around(
            info,
            lambda around: Category(
                slug=category["slug"],
                name=category["name"],
                benchmark_count=around.category_count,
            ),
        )

    @strawberry.field(
        directives=[page_of()],
        description=(
            "Other benchmarks in the same category, without this benchmark's own family (its "
            "parent and tracks). Order: in use first, then editorial prominence, then name."
        ),
    )
    def siblings(
        self, info: strawberry.Info[Context], first: int = 20, after: str | None = None
    ) -> Connection["Benchmark"]:
        at = page(first, after)

        def siblings_in(around: Neighbourhood) -> Connection[Benchmark]:
            held = around.request.siblings_limit
            if at.offset + at.size <= held or around.sibling_count <= held:
                # Among the siblings that came with the benchmark, their leaders' models known.
                found = [self._member(doc) for doc in at.of(around.siblings)]
                return connection(found, at=at, total_count=around.sibling_count)

            async def further() -> Connection[Benchmark]:
                wanted = replace(around.request, siblings_offset=at.offset, siblings_limit=at.size)
                docs = (await info.context.loaders.neighbourhood.load(wanted)).siblings
                found = await benchmarks_from_summaries(info.context, docs, with_leaders=True)
                return connection(found, at=at, total_count=around.sibling_count)

            awaited: Any = further()
            return awaited  # type: ignore[no-any-return]

        return self._around(info, siblings_in)

    def _rows_on(
        self,
        as_of: Date | None,
        first: int,
        reported_by: list[SourceKind] | None,
        exclude_self_reported: bool | None,
        pick: Callable[[Board], list[rules.Row]],
        kept: Callable[[DerivedBoard], list[LeaderboardRow]],
    ) -> list[LeaderboardRow]:
        """The first `first` rows `pick` takes from the leaderboard (now or as of a date), of
        the entries the report filter lets through: what `leaderboard`, `leaders` and
        `trackedLeaders` answer. The whole leaderboard now is the derived one, kept: `kept`
        takes the same rows from it."""
        size = slice_size("first", first)
        if size == 0:  # priced as none: computed as none
            return []
        only = _report_filter(reported_by, exclude_self_reported)
        if as_of is None and only.everything:
            return self._with_whole(lambda: kept(self.derived)[:size])
        return self._on(
            as_of,
            lambda board: [LeaderboardRow.from_row(r, board, self.doc) for r in pick(board)[:size]],
            only,
        )

    def _on(
        self,
        as_of: Date | None,
        answer: Callable[[Board], T],
        only: ReportFilter = EVERYTHING,
    ) -> T:
        """`answer` from the leaderboard now, or from the leaderboard as it stood on `as_of`;
        of the entries `only` lets through.

        The latter needs the history, so it is a coroutine, which GraphQL awaits; the former
        is not: an async resolver costs a page executed anew (some twenty of these fields) 8%.
        """
        if as_of is None:
            if only.everything:
                return self._with_whole(lambda: answer(self.board))
            return self._with_whole(
                lambda: answer(
                    self._board(self._rows_of(self.whole["entries"], self.tracked, only))
                )
            )

        async def on_that_day() -> T:
            return answer(self._board(await self._rows_as_of(as_of, only)))

        awaited: Any = on_that_day()
        return awaited  # type: ignore[no-any-return]

    async def _rows_as_of(self, as_of: Date, only: ReportFilter) -> list[rules.Row]:
        """The leaderboard as it stood on `as_of`, its models tracked as of today."""
        read = read_as_of(await self._history(), as_of)
        entries = read["entries"] if read is not None else []
        tracked = await self.context.loaders.tracked_models_of_entries(entries, self.tracked)
        return self._rows_of(entries, tracked, only)

    def _rows_of(
        self, entries: list[EntryDoc], tracked: TrackedModels, only: ReportFilter
    ) -> list[rules.Row]:
        """The leaderboard of the entries `only` lets through (a model's best among them)."""
        if not only.everything:
            entries = reported_entries(entries, self.doc, tracked, only)
        higher_is_better = self.doc["metric"]["higher_is_better"]
        return rules.leaderboard(entries, higher_is_better=higher_is_better, tracked=tracked)

    async def _tracked_in(self, history: list[ReadDoc]) -> TrackedModels:
        """The tracked models any of these reads names."""
        return await self.context.loaders.tracked_models_of_entries(
            entries_of(history), self.tracked
        )

    async def _history(self) -> list[ReadDoc]:
        """Its reads, oldest first; loaded when this document came without them."""
        if "history" not in self.doc:
            whole = await self.context.loaders.benchmark_by_slug.load(self.slug)
            return [] if whole is None else whole.get("history", [])
        return self.whole["history"]

    def _around(self, info: strawberry.Info[Context], answer: Callable[[Neighbourhood], T]) -> T:
        """`answer` from the benchmarks around this one: at once if they came with it (a page),
        else once they are loaded (a coroutine, which GraphQL awaits)."""
        if self.neighbourhood is not None:
            return answer(self.neighbourhood)

        async def once_loaded() -> T:
            # An answer may itself read more (siblings past those loaded): awaited here, as
            # GraphQL awaits only the coroutine it is given, not one that coroutine returns.
            found: Any = answer(await self._neighbourhood(info))
            return await found if isawaitable(found) else found  # type: ignore[no-any-return]

        awaited: Any = once_loaded()
        return awaited  # type: ignore[no-any-return]

    def _member(self, doc: BenchmarkSummaryDoc) -> "Benchmark":
        """A benchmark of the neighbourhood, as its summary, the models its stored leaders name
        known to this one."""
        return Benchmark.from_doc(
            doc, {}, self.context, stored=True, leader_models=self.leader_models
        )

    async def _neighbourhood(self, info: strawberry.Info[Context]) -> Neighbourhood:
        """The neighbourhood, read now, with the tracked models its benchmarks name."""
        if self.neighbourhood is None:
            request = NeighbourhoodRequest(
                family=family_rules.family_root(self.doc),
                category=self.doc["category"]["slug"],
                siblings_limit=SIBLINGS_WITH_A_BENCHMARK,
            )
            around = await info.context.loaders.neighbourhood.load(request)
            found = await leader_models(info.context, _members(around))
            self.leader_models = {**self.leader_models, **found}
            self.neighbourhood = around
        return self.neighbourhood


async def benchmark_page(context: Context, slug: str, siblings: int) -> Benchmark | None:
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
    names.update(model_key(place["entry"]["model_name"]) for place in _leaders(_members(around)))
    # One store call for them all, past the per-key loader: its futures cost more than the
    # read (some 100 names on a synthetic page).
    models = await context.store.models_by_keys(list(names))
    history_tracked = "history" in doc
    return Benchmark.from_doc(
        doc,
        index_by_key(models),
        context,
        around,
        history_tracked=history_tracked,
        stored=True,
        leader_models={model["slug"]: model for model in models},
    )


def _members(around: Neighbourhood) -> list[BenchmarkSummaryDoc]:
    return [*around.family, *around.siblings]


def _leaders(summaries: list[BenchmarkSummaryDoc]) -> list[PlaceDoc]:
    """The stored leaders of these benchmarks that are tracked models."""
    stored = [doc.get("leaders") or NO_LEADERS for doc in summaries]
    places = [place for doc in stored for place in (doc["leader"], doc["tracked_leader"])]
    return [place for place in places if place is not None and place["model"] is not None]


async def leader_models(
    context: Context, summaries: list[BenchmarkSummaryDoc]
) -> dict[str, ModelDoc]:
    """The tracked models the stored leaders of these benchmarks name, by slug (one load)."""
    slugs = sorted({place["model"] for place in _leaders(summaries) if place["model"]})
    found = await context.loaders.model_by_slug.load_many(slugs)
    return {model["slug"]: model for model in found if model is not None}


async def benchmarks_from_summaries(
    context: Context, summaries: list[BenchmarkSummaryDoc], *, with_leaders: bool
) -> list[Benchmark]:
    """A catalog's rows: each answers from its summary, its stored leaders with their models
    as they are now, and loads the rest only for a field that needs it. `with_leaders`: the
    rows show leaders, so their models are loaded now, in one call, and the leaders resolve
    without waiting (200 awaited fields cost a catalog page more than the call)."""
    models = await leader_models(context, summaries) if with_leaders else {}
    return [
        Benchmark.from_doc(doc, {}, context, stored=True, leader_models=models) for doc in summaries
    ]


async def benchmarks_from_docs(
    context: Context, docs: list[BenchmarkDoc], *, stored: bool = False
) -> list[Benchmark]:
    """Benchmark objects for these documents, their tracked models loaded in one batch;
    `stored`: read from the store as they are there (see `Benchmark.from_doc`)."""
    tracked = await context.loaders.tracked_models(docs)
    return [Benchmark.from_doc(doc, tracked, context, stored=stored) for doc in docs]


def _report_filter(
    kinds: list[SourceKind] | None, exclude_self_reported: bool | None
) -> ReportFilter:
    names = None if kinds is None else frozenset(kind.name for kind in kinds)
    return ReportFilter(kinds=names, exclude_self_reported=bool(exclude_self_reported))


def _maybe(enum: type[E], stored: str | None) -> E | None:
    return None if stored is None else enum[stored]
