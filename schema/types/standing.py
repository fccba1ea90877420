"""Where a model stands on the benchmarks whose leaderboards list it: the ModelResult type.

It names both a benchmark and a model's rows, so it sits above both: Model names it lazily (its
standings), the one place the Model, Benchmark and LeaderboardRow types' cycle is broken."""

from typing import Self

import strawberry

from resolvers import Board, Row, standing
from schema.context import Context
from schema.types.benchmark import Benchmark, benchmarks_from_docs
from schema.types.leaderboard import LeaderboardRow
from store import BenchmarkDoc


@strawberry.type(description="Where a model we track stands on one benchmark's leaderboard.")
class ModelResult:
    benchmark: Benchmark = strawberry.field(description="The benchmark.")
    rank: int = strawberry.field(description="Its place on that leaderboard (its best row).")
    score: float = strawberry.field(description="Its best score there, as published.")
    setting: str | None = strawberry.field(description="The setting of that best score.")
    leads: bool = strawberry.field(description="Whether it tops that leaderboard.")
    leads_tracked_models: bool = strawberry.field(
        description="Whether it is the best of the models we track there (the named leader)."
    )
    best: strawberry.Private[Row]
    board: strawberry.Private[Board]

    @classmethod
    def on(cls, benchmark: Benchmark, model_slug: str) -> Self | None:
        """Where the model stands on `benchmark` (a whole document), if its leaderboard lists it."""
        found = standing(benchmark.board.rows, model_slug)
        if found is None:
            return None
        return cls(
            benchmark=benchmark,
            rank=found.row.rank,
            score=found.row.entry["score"],
            setting=found.row.entry["setting"],
            leads=found.leads,
            leads_tracked_models=found.leads_tracked_models,
            best=found.row,
            board=benchmark.board,
        )

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
    def row(self) -> LeaderboardRow:
        return LeaderboardRow.from_row(self.best, self.board, self.benchmark.doc)


async def model_results(
    context: Context, model_slug: str, docs: list[BenchmarkDoc]
) -> list[ModelResult]:
    """Where the model stands on each of these benchmarks whose leaderboard lists it."""
    found = [
        ModelResult.on(benchmark, model_slug)
        for benchmark in await benchmarks_from_docs(context, docs, stored=True)
    ]
    return [result for result in found if result is not None]
