"""A benchmark's history of leaderboard reads as GraphQL types."""

from typing import Self

import strawberry

from resolvers import ReadChanges
from schema.vocabulary import SliceArgument, slice_size, sliced_by
from store import Date, DateTime, EntryDoc, ReadDoc

DEFAULT_CHANGED_ROWS = 50


@strawberry.type(description="A result as a read recorded it.")
class ReadEntry:
    model_name: str = strawberry.field(description="The model, named as the leaderboard names it.")
    setting: str | None = strawberry.field(description="The setting or harness it ran with.")
    score: float = strawberry.field(description="The score as published.")
    published_on: Date | None = strawberry.field(description="When the score was published.")

    @classmethod
    def from_entry(cls, entry: EntryDoc) -> Self:
        return cls(
            model_name=entry["model_name"],
            setting=entry["setting"],
            score=entry["score"],
            published_on=entry["published_on"],
        )


@strawberry.type(description="A row whose score differs from the previous read.")
class ScoreChange:
    model_name: str = strawberry.field(description="The model, named as the leaderboard names it.")
    setting: str | None = strawberry.field(description="The setting or harness it ran with.")
    before: float = strawberry.field(description="Its score in the previous read.")
    after: float = strawberry.field(description="Its score in this read.")


@strawberry.type(
    description=(
        "One read of a benchmark's leaderboard from its source, and what it changed against "
        "the read before it (the first read adds every row)."
    )
)
class LeaderboardRead:
    revision: int = strawberry.field(description="The benchmark's revision this read made.")
    read_on: Date = strawberry.field(description="The day the source was read.")
    recorded_by: str = strawberry.field(description="Who recorded it: an API key's name.")
    recorded_at: DateTime = strawberry.field(description="When it was recorded.")
    entry_count: int = strawberry.field(description="How many rows were read.")
    changes: strawberry.Private[ReadChanges]

    @strawberry.field(
        directives=[sliced_by("first")],
        description="Rows not in the previous read (the first `first`, 50 unless asked).",
    )
    def added(self, first: SliceArgument = DEFAULT_CHANGED_ROWS) -> list[ReadEntry]:
        return [ReadEntry.from_entry(e) for e in self.changes.added[: slice_size("first", first)]]

    @strawberry.field(
        directives=[sliced_by("first")],
        description="Rows of the previous read now gone (the first `first`, 50 unless asked).",
    )
    def removed(self, first: SliceArgument = DEFAULT_CHANGED_ROWS) -> list[ReadEntry]:
        return [ReadEntry.from_entry(e) for e in self.changes.removed[: slice_size("first", first)]]

    @strawberry.field(
        directives=[sliced_by("first")],
        description="Rows whose score changed (the first `first`, 50 unless asked).",
    )
    def changed(self, first: SliceArgument = DEFAULT_CHANGED_ROWS) -> list[ScoreChange]:
        return [
            ScoreChange(
                model_name=change.after["model_name"],
                setting=change.after["setting"],
                before=change.before["score"],
                after=change.after["score"],
            )
            for change in self.changes.changed[: slice_size("first", first)]
        ]

    @classmethod
    def from_read(cls, read: ReadDoc, changes: ReadChanges) -> Self:
        return cls(
            revision=read["revision"],
            read_on=read["read_on"],
            recorded_by=read["recorded_by"],
            recorded_at=read["recorded_at"],
            entry_count=len(read["entries"]),
            changes=changes,
        )
