"""Leaderboard rows and score points as GraphQL types."""

from typing import Self

import strawberry

from resolvers import (
    Board,
    ChartPoint,
    Places,
    Row,
    StoredPlaces,
    display_name,
    interval_of,
    released_after_test_set,
    reported_by,
    self_reported,
)
from resolvers import Interval as ComputedInterval
from resolvers import RankRange as RankPlaces
from schema.types.model import Model
from schema.vocabulary import SourceKind
from store import BenchmarkSummaryDoc, Date, ModelDoc, PlaceDoc


@strawberry.type(
    name="ScoreInterval", description="The range a score's true value lies in, at a confidence."
)
class Interval:
    low: float = strawberry.field(description="Its lower end, in the score's unit.")
    high: float = strawberry.field(description="Its upper end, in the score's unit.")
    level: float = strawberry.field(description="Its confidence level: 0.95 for 95%.")
    computed: bool = strawberry.field(
        description=(
            "False: published with the score. True: computed by the almanac, from the standard "
            "error (score ± 1.959964 * SE), or for a PERCENT score with only a sample size, the "
            "Wilson score interval at 95%."
        )
    )

    @classmethod
    def from_interval(cls, found: ComputedInterval | None) -> Self | None:
        if found is None:
            return None
        return cls(low=found.low, high=found.high, level=found.level, computed=found.computed)


@strawberry.type(description="The places a row could hold, given how uncertain the scores are.")
class RankRange:
    best: int = strawberry.field(
        description="1 + the rows whose interval lies wholly above this row's (lower is better: "
        "wholly below)."
    )
    worst: int = strawberry.field(
        description="The rows whose interval does not lie wholly below this row's, itself included."
    )


@strawberry.type(description="A model's best result on a leaderboard, with its place.")
class LeaderboardRow:
    rank: int = strawberry.field(
        description="1-based place: score best first, ties by model name A to Z, ranks distinct."
    )
    model_name: str = strawberry.field(
        description=(
            "The almanac's name for a model we track (e.g. `Qwen-14B` for the leaderboard's "
            "`Qwen-14B-Chat`); otherwise the name as the leaderboard prints it."
        )
    )
    listed_as: str = strawberry.field(
        description=(
            "The model's name as the leaderboard's source printed it (`Qwen-14B-Chat`), "
            "whatever name the almanac shows."
        )
    )
    tracked: bool = strawberry.field(
        description="Whether the model is on the almanac's model list (shown in gray if not)."
    )
    model: Model | None = strawberry.field(description="The tracked model, if tracked.")
    setting: str | None = strawberry.field(
        description="The setting or harness it ran with, e.g. `version 20231206`."
    )
    score: float = strawberry.field(description="The score as published.")
    source: str | None = strawberry.field(description="Where the score came from.")
    published_on: Date | None = strawberry.field(description="When the score was published.")
    note: str | None = strawberry.field(description="A note the source gives with the result.")
    standard_error: float | None = strawberry.field(
        description="The score's standard error, as published; null if none was."
    )
    sample_size: int | None = strawberry.field(
        description="How many tasks, questions or votes the score rests on, as published."
    )

    row: strawberry.Private[Row]
    board: strawberry.Private[Places]
    benchmark: strawberry.Private[BenchmarkSummaryDoc]

    @classmethod
    def from_row(cls, row: Row, board: Places, benchmark: BenchmarkSummaryDoc) -> Self:
        entry = row.entry
        return cls(
            rank=row.rank,
            model_name=row.model_name,
            listed_as=entry["model_name"],
            tracked=row.tracked,
            model=Model.from_optional_doc(row.model),
            setting=entry["setting"],
            score=entry["score"],
            source=entry["source"],
            published_on=entry["published_on"],
            note=entry.get("note"),
            standard_error=entry.get("standard_error"),
            sample_size=entry.get("sample_size"),
            row=row,
            board=board,
            benchmark=benchmark,
        )

    @classmethod
    def from_optional_row(
        cls, row: Row | None, board: Board, benchmark: BenchmarkSummaryDoc
    ) -> Self | None:
        return None if row is None else cls.from_row(row, board, benchmark)

    @classmethod
    def from_place(
        cls, place: PlaceDoc, model: ModelDoc | None, benchmark: BenchmarkSummaryDoc
    ) -> Self:
        """A row stored with its benchmark (a catalog row's leader), its tracked model as it is
        now."""
        entry = place["entry"]
        row = Row(
            rank=place["rank"],
            model_name=display_name(entry, model),
            model=model,
            entry=entry,
        )
        places = StoredPlaces(
            unit=benchmark["metric"]["unit"],
            places=RankPlaces(best=place["best"], worst=place["worst"]),
            tied=place["tied_with_leader"],
        )
        return cls.from_row(row, places, benchmark)

    @strawberry.field(
        description=(
            "The score's interval: as published, else computed (see `computed`); null when "
            "nothing says how uncertain it is, and the score counts as a point."
        )
    )
    def interval(self) -> Interval | None:
        return Interval.from_interval(interval_of(self.row.entry, self.board.unit))

    @strawberry.field(
        description=(
            "The places it could hold on this leaderboard, with each row's interval (or its "
            "score): tied scores share a range (82.8 and 82.8: both 1-2). `rank` is one of them."
        )
    )
    def rank_range(self) -> RankRange:
        found = self.board.range_of(self.row)
        return RankRange(best=found.best, worst=found.worst)

    @strawberry.field(
        description="Whether it could be first (best rank 1) and is not the leader itself."
    )
    def tied_with_leader(self) -> bool:
        return self.board.tied_with_leader(self.row)

    @strawberry.field(
        description="Who reported the score: the entry's own kind, else its benchmark source's."
    )
    def reported_by(self) -> SourceKind | None:
        kind = reported_by(self.row.entry, self.benchmark)
        return None if kind is None else SourceKind[kind]

    @strawberry.field(
        description=(
            "True when the reporter is the model's own lab (known for tracked models, through "
            "their lab), false when it is known not to be, null when unknown."
        )
    )
    def self_reported(self) -> bool | None:
        return self_reported(self.row.entry, self.row.model, self.benchmark)

    @strawberry.field(
        description=(
            "A heuristic, not a finding: true when the model's release month is after the "
            "benchmark's `testSetPublishedOn` (its training data may include the test set), "
            "false when before, null when unknown or in the same month."
        )
    )
    def released_after_test_set(self) -> bool | None:
        return released_after_test_set(self.row.model, self.benchmark)


@strawberry.type(description="One stored result, a dot on the scores-over-time chart.")
class ScorePoint:
    date: Date | None = strawberry.field(description="When the result was published.")
    score: float = strawberry.field(description="The score as published.")
    model_name: str = strawberry.field(description="Named as on the leaderboard's rows.")
    tracked: bool = strawberry.field(description="Whether the model is one we track.")
    setting: str | None = strawberry.field(description="The setting it ran with.")

    @classmethod
    def from_point(cls, point: ChartPoint) -> Self:
        return cls(
            date=point.date,
            score=point.score,
            model_name=point.model_name,
            tracked=point.tracked,
            setting=point.entry["setting"],
        )
