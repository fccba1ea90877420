"""The Model type: a model we track, and its results across benchmarks."""

from collections.abc import Iterable
from typing import TYPE_CHECKING, Annotated, Self

import strawberry

from resolvers import leaderboard as rules
from resolvers.ranking import Board
from schema.context import Context
from schema.types.lab import Lab
from schema.vocabulary import (
    Connection,
    Revised,
    SliceArgument,
    SlugNode,
    connection,
    page,
    page_of,
    slice_size,
    sliced_by,
)
from store import BenchmarkDoc, ModelDoc, YearMonth

if TYPE_CHECKING:
    from schema.types.benchmark import Benchmark
    from schema.types.leaderboard import LeaderboardRow

DEFAULT_RESULTS = 50


@strawberry.type(description="Where a model we track stands on one benchmark's leaderboard.")
class ModelResult:
    benchmark: Annotated["Benchmark", strawberry.lazy("schema.types.benchmark")] = strawberry.field(
        description="The benchmark."
    )
    rank: int = strawberry.field(description="Its place on that leaderboard (its best row).")
    score: float = strawberry.field(description="Its best score there, as published.")
    setting: str | None = strawberry.field(description="The setting of that best score.")
    leads: bool = strawberry.field(description="Whether it tops that leaderboard.")
    leads_tracked_models: bool = strawberry.field(
        description="Whether it is the best of the models we track there (the named leader)."
    )
    best: strawberry.Private[rules.Row]
    board: strawberry.Private[Board]

    @strawberry.field(
        description=(
            "Whether it could be first there (`rankRange.best` 1: it leads, or is tied with the "
            "leader given how uncertain the scores are), where `leads` names one row only."
        )
    )
    def could_lead(self) -> bool:
        return self.board.range_of(self.best).best == 1

    @strawberry.field(
        description=(
            "Whether it is among that benchmark's `trackedLeaders`: it could be first among "
            "the models we track."
        )
    )
    def could_lead_tracked_models(self) -> bool:
        return any(row is self.best for row in self.board.tracked_leaders())

    @strawberry.field(
        description=(
            "Its row on that leaderboard, with everything the leaderboard shows: interval, "
            "rank range, who reported it."
        )
    )
    def row(self) -> Annotated["LeaderboardRow", strawberry.lazy("schema.types.leaderboard")]:
        from schema.types.leaderboard import LeaderboardRow

        return LeaderboardRow.from_row(self.best, self.board, self.benchmark.doc)


@strawberry.type(
    description=(
        "A model on the almanac's curated list of models we track. Leaderboards spell model "
        "names their own way; `aliases` lists the spellings that map to this model."
    )
)
class Model(SlugNode, Revised):
    slug: str = strawberry.field(description="Stable URL slug; never reused.")

    name: str = strawberry.field(description="The almanac's name for it, e.g. `Qwen-14B`.")
    aliases: list[str] = strawberry.field(
        description="Other names leaderboards use for it; matched ignoring case and spaces."
    )
    lab: Lab | None = strawberry.field(description="The lab that made it.")
    released_on: YearMonth | None = strawberry.field(description="Release month.")
    capability_index_rank: int | None = strawberry.field(
        description="Its rank on the almanac's capability index (1 is strongest), if ranked."
    )

    doc: strawberry.Private[ModelDoc]

    @classmethod
    def from_doc(cls, doc: ModelDoc) -> Self:
        return cls(
            slug=doc["slug"],
            name=doc["name"],
            aliases=doc["aliases"],
            lab=Lab.from_doc(doc["lab"]),
            released_on=doc["released_on"],
            capability_index_rank=doc["capability_index_rank"],
            revision=doc["revision"],
            updated_at=doc["updated_at"],
            updated_by=doc["updated_by"],
            doc=doc,
        )

    @classmethod
    def from_optional_doc(cls, doc: ModelDoc | None) -> Self | None:
        return None if doc is None else cls.from_doc(doc)

    @classmethod
    async def resolve_nodes(  # type: ignore[override]
        cls, *, info: strawberry.Info[Context], node_ids: Iterable[str], required: bool = False
    ) -> list[Self | None]:
        docs = await info.context.loaders.model_by_slug.load_many(list(node_ids))
        return [cls.from_optional_doc(doc) for doc in docs]

    @strawberry.field(
        directives=[page_of()],
        description=(
            "Its result on every benchmark whose leaderboard lists it (under its name or an "
            "alias), best place first (then by the benchmark's name), a page at a time."
        ),
    )
    async def standings(
        self, info: strawberry.Info[Context], first: int = 20, after: str | None = None
    ) -> Connection[ModelResult]:
        at = page(first, after)
        # The store keeps each tracked model's place on every leaderboard: it reads this page.
        docs, total = await info.context.store.model_results(self.slug, at.offset, at.size)
        return connection(await self._results(info, docs), at=at, total_count=total)

    @strawberry.field(
        directives=[sliced_by("first")],
        description=(
            "Its result on every benchmark whose leaderboard lists it (under its name or an "
            "alias), best place first: the first `first` (50 unless asked otherwise)."
        ),
        deprecation_reason=(
            "Use `standings`: the same results, a page at a time, with a total and cursors."
        ),
    )
    async def results(
        self, info: strawberry.Info[Context], first: SliceArgument = DEFAULT_RESULTS
    ) -> list[ModelResult]:
        docs, _ = await info.context.store.model_results(self.slug, 0, slice_size("first", first))
        return await self._results(info, docs)

    async def _results(
        self, info: strawberry.Info[Context], docs: list[BenchmarkDoc]
    ) -> list[ModelResult]:
        from schema.types.benchmark import benchmarks_from_docs

        results = []
        for benchmark in await benchmarks_from_docs(info.context, docs, stored=True):
            found = rules.standing(benchmark.rows, self.slug)
            if found is not None:
                results.append(
                    ModelResult(
                        benchmark=benchmark,
                        rank=found.row.rank,
                        score=found.row.entry["score"],
                        setting=found.row.entry["setting"],
                        leads=found.leads,
                        leads_tracked_models=found.leads_tracked_models,
                        best=found.row,
                        board=benchmark.board,
                    )
                )
        return results
