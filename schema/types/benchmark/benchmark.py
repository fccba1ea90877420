"""The Benchmark type: what a benchmark shows, and the almanac's rules computed over it. How it
loads what a field needs is schema.types.benchmark.loading's."""

from collections.abc import Iterable
from dataclasses import replace
from typing import Any, Self

import strawberry
from strawberry import relay

from editing import MAX_TRACKS
from resolvers import Board, changes_by_read, family, when_test_set_published
from resolvers import headroom as headroom_of
from resolvers import leader as leader_row
from resolvers import near_ceiling as reaches_ceiling
from resolvers import tracked_leader as tracked_leader_row
from schema.context import Context
from schema.types.benchmark.loading import (
    Loaded,
    deferred,
    docs_loaded,
    page_loaded,
    summaries_loaded,
)
from schema.types.benchmark.parts import (
    DEFAULT_LEADERBOARD_ROWS,
    DEFAULT_LEADERS,
    DEFAULT_SCORE_POINTS,
    EVERYTHING,
    AsOf,
    Category,
    ExcludeSelfReported,
    Metric,
    ModelCardReport,
    ModelCardReports,
    ReportedBy,
    Source,
)
from schema.types.history import LeaderboardRead
from schema.types.lab import Lab
from schema.types.leaderboard import LeaderboardRow, ScorePoint
from schema.types.model import Model
from schema.vocabulary import (
    COMPUTED,
    AnswerFormat,
    Connection,
    Kind,
    Level,
    Revised,
    Scoring,
    SliceArgument,
    SlugNode,
    Status,
    StoredFields,
    TaskAvailability,
    at_most,
    connection,
    global_id,
    node_id,
    page,
    page_of,
    slice_size,
    sliced_by,
)
from store import (
    BenchmarkDoc,
    BenchmarkSummaryDoc,
    Date,
    Neighbourhood,
    YearMonth,
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
    id: relay.GlobalID = node_id()
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

    loaded: strawberry.Private[Loaded]

    @classmethod
    def from_loaded(cls, loaded: Loaded) -> Self:
        """The benchmark its document shows, answered from as far as what it was read with
        goes (a catalog row's summary, a page's neighbourhood): a field that needs more loads
        it (schema.types.benchmark.loading)."""
        return cls(**loaded.own_fields(own_fields), loaded=loaded)

    @classmethod
    async def resolve_nodes(  # type: ignore[override]
        cls, *, info: strawberry.Info[Context], node_ids: Iterable[str], required: bool = False
    ) -> list[Self | None]:
        slugs = list(node_ids)
        docs = await info.context.loaders.benchmark_by_slug.load_many(slugs)
        found = [doc for doc in docs if doc is not None]
        by_slug = {b.slug: b for b in await benchmarks_from_docs(info.context, found, stored=True)}
        return [by_slug.get(slug) for slug in slugs]  # type: ignore[misc]

    @property
    def doc(self) -> BenchmarkSummaryDoc:
        return self.loaded.doc

    @property
    def board(self) -> Board:
        """The whole leaderboard now (of a whole document)."""
        return self.loaded.board

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
        return self.loaded.rows_on(
            (as_of, first, reported_by, exclude_self_reported),
            lambda b: b.rows,
            lambda d: d.rows,
        )

    @strawberry.field(description="The row that tops the leaderboard, tracked or not.")
    def leader(self, as_of: AsOf = None) -> LeaderboardRow | None:
        loaded = self.loaded
        if as_of is None:
            stored = loaded.stored_leaders()
            if stored is not None:
                return loaded.placed(stored["leader"])
            return loaded.with_whole(lambda: loaded.derived.leader)
        return loaded.on(as_of, lambda board: loaded.row(board, leader_row(board.rows)), EVERYTHING)

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
        return self.loaded.rows_on(
            (as_of, first, reported_by, exclude_self_reported),
            Board.leaders,
            lambda d: d.leaders,
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
        return self.loaded.rows_on(
            (as_of, first, reported_by, exclude_self_reported),
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
        return self.loaded.with_leader_row(lambda leader: headroom_of(self.doc, leader))

    @strawberry.field(
        description=(
            "Whether the leader's interval (or its score, without one) reaches the ceiling "
            "(as for `headroom`); null without a leader or a ceiling. A hint for `status`, "
            "which editors set."
        )
    )
    def near_ceiling(self) -> bool | None:
        return self.loaded.with_leader_row(lambda leader: reaches_ceiling(self.doc, leader))

    @strawberry.field(
        description=(
            "The best row of a model we track. Untracked rows don't count toward leaders: "
            "wherever the site names a leader outside the page's own table, it is this one."
        )
    )
    def tracked_leader(self, as_of: AsOf = None) -> LeaderboardRow | None:
        loaded = self.loaded
        if as_of is None:
            stored = loaded.stored_leaders()
            if stored is not None:
                return loaded.placed(stored["tracked_leader"])
            return loaded.with_whole(lambda: loaded.derived.tracked_leader)
        return loaded.on(
            as_of,
            lambda board: loaded.row(board, tracked_leader_row(board.rows)),
            EVERYTHING,
        )

    @strawberry.field(
        directives=[COMPUTED], description="How many rows the leaderboard has (one per model)."
    )
    def entry_count(self, as_of: AsOf = None) -> int:
        return self.loaded.on(as_of, lambda board: len(board.rows), EVERYTHING)

    @strawberry.field(
        directives=[COMPUTED], description="How many leaderboard rows are models we track."
    )
    def tracked_model_count(self) -> int:
        return self.loaded.with_whole(lambda: self.loaded.derived.tracked_model_count)

    @strawberry.field(
        directives=[COMPUTED],
        description="Of the tracked models on the leaderboard, the best on the capability index.",
    )
    def strongest_model_tested(self) -> Model | None:
        return self.loaded.with_whole(lambda: self.loaded.derived.strongest_model_tested)

    @strawberry.field(
        directives=[COMPUTED],
        description="Of the tracked models on the leaderboard, the newest by release month.",
    )
    def last_model_added(self) -> Model | None:
        return self.loaded.with_whole(lambda: self.loaded.derived.last_model_added)

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
        return self.loaded.scores_over_time(count)

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
        history = await self.loaded.history()
        changes = changes_by_read(history, await self.loaded.tracked_in(history))
        newest_first = list(zip(history, changes, strict=True))[::-1]
        return connection(
            [LeaderboardRead.from_read(read, changes) for read, changes in at.of(newest_first)],
            at=at,
            total_count=len(history),
        )

    @strawberry.field(description="Headline results labs reported for it in model cards.")
    def model_card_reports(self) -> ModelCardReports:
        def reports() -> ModelCardReports:
            found = self.loaded.whole["model_card_reports"]
            return ModelCardReports(
                total_count=len(found),
                nodes=[ModelCardReport(**REPORT_FIELDS.of(report)) for report in found],
            )

        return self.loaded.with_whole(reports)

    @strawberry.field(description="The parent record this benchmark is a track of, if any.")
    def parent(self, info: strawberry.Info[Context]) -> "Benchmark | None":
        def parent_in(around: Neighbourhood) -> Benchmark | None:
            found = family(self.doc, around.family).parent
            return None if found is None else Benchmark.from_loaded(self.loaded.member(found))

        return self.loaded.around(parent_in)

    @strawberry.field(
        directives=[at_most(MAX_TRACKS)],
        description=(
            "The tracks of this benchmark's family, in the family's order: a parent's own "
            "tracks, or for a track every track of its parent (itself included). Empty for a "
            "benchmark without tracks or parent."
        ),
    )
    def tracks(self, info: strawberry.Info[Context]) -> list["Benchmark"]:
        return self.loaded.around(
            lambda around: [
                Benchmark.from_loaded(self.loaded.member(doc))
                for doc in family(self.doc, around.family).tracks
            ],
        )

    @strawberry.field(description="The category it belongs to.")
    def category(self, info: strawberry.Info[Context]) -> Category:
        category = self.doc["category"]
        return self.loaded.around(
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
        loaded = self.loaded

        def siblings_in(around: Neighbourhood) -> Connection[Benchmark]:
            held = around.request.siblings_limit
            if at.offset + at.size <= held or around.sibling_count <= held:
                # Among the siblings that came with the benchmark, their leaders' models known.
                found = [
                    Benchmark.from_loaded(loaded.member(doc)) for doc in at.of(around.siblings)
                ]
                return connection(found, at=at, total_count=around.sibling_count)

            async def further() -> Connection[Benchmark]:
                wanted = replace(around.request, siblings_offset=at.offset, siblings_limit=at.size)
                docs = (await loaded.context.loaders.neighbourhood.load(wanted)).siblings
                found = await benchmarks_from_summaries(loaded.context, docs, with_leaders=True)
                return connection(found, at=at, total_count=around.sibling_count)

            return deferred(further())

        return loaded.around(siblings_in)


BENCHMARK_FIELDS = StoredFields(Benchmark, BenchmarkSummaryDoc)


def own_fields(doc: BenchmarkSummaryDoc) -> dict[str, Any]:
    """What a Benchmark is built with besides how it loads: its stored fields and its `id`."""
    return {**BENCHMARK_FIELDS.of(doc), "id": global_id("Benchmark", doc["slug"])}


REPORT_FIELDS = StoredFields(ModelCardReport)


async def benchmark_page(context: Context, slug: str, siblings: int) -> Benchmark | None:
    """A benchmark with what its page shows around it, read in one go (see `page_loaded`)."""
    loaded = await page_loaded(context, slug, siblings)
    return None if loaded is None else Benchmark.from_loaded(loaded)


async def benchmarks_from_summaries(
    context: Context, summaries: list[BenchmarkSummaryDoc], *, with_leaders: bool
) -> list[Benchmark]:
    """A catalog's rows (see `summaries_loaded`)."""
    found = await summaries_loaded(context, summaries, with_leaders=with_leaders)
    return [Benchmark.from_loaded(loaded) for loaded in found]


async def benchmarks_from_docs(
    context: Context, docs: list[BenchmarkDoc], *, stored: bool = False
) -> list[Benchmark]:
    """Benchmarks for these whole documents (see `docs_loaded`)."""
    found = await docs_loaded(context, docs, stored=stored)
    return [Benchmark.from_loaded(loaded) for loaded in found]
