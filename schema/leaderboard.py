"""Leaderboard rows and score points as GraphQL types."""

from typing import Self

import strawberry

from resolvers import leaderboard as rules
from schema.model import Model
from store import Date


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

    @classmethod
    def from_row(cls, row: rules.Row) -> Self:
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
        )

    @classmethod
    def from_optional_row(cls, row: rules.Row | None) -> Self | None:
        return None if row is None else cls.from_row(row)


@strawberry.type(description="One stored result, a dot on the scores-over-time chart.")
class ScorePoint:
    date: Date | None = strawberry.field(description="When the result was published.")
    score: float = strawberry.field(description="The score as published.")
    model_name: str = strawberry.field(description="Named as on the leaderboard's rows.")
    tracked: bool = strawberry.field(description="Whether the model is one we track.")
    setting: str | None = strawberry.field(description="The setting it ran with.")

    @classmethod
    def from_point(cls, point: rules.ChartPoint) -> Self:
        return cls(
            date=point.date,
            score=point.score,
            model_name=point.model_name,
            tracked=point.tracked,
            setting=point.entry["setting"],
        )
