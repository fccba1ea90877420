"""GraphQL input types of the write API, and their translation into the editor's inputs.

In `BenchmarkInput` and `ModelInput` a field left out stays as it is, and `null` clears it
(where it may be empty). The editor checks every value (`editing.inputs`).
"""

import dataclasses
import re
from enum import Enum
from typing import Any

import strawberry

from schema.vocabulary.enums import (
    AnswerFormat,
    Kind,
    Level,
    MetricUnit,
    Scoring,
    SourceKind,
    Status,
    TaskAvailability,
)
from store import Date, YearMonth

UNSET: Any = strawberry.UNSET


@strawberry.input(
    name="ScoreIntervalInput",
    description="A score's interval as its source publishes it; it must hold the score.",
)
class IntervalInput:
    low: float = strawberry.field(description="Its lower end, in the score's unit.")
    high: float = strawberry.field(description="Its upper end, in the score's unit.")
    level: float = strawberry.field(
        default=0.95, description="Its confidence level, above 0 and below 1: 0.95 for 95%."
    )


@strawberry.input(description="One row read from a leaderboard.")
class EntryInput:
    model_name: str = strawberry.field(description="The model as the leaderboard names it.")
    score: float = strawberry.field(description="The score as published (0-100 for PERCENT).")
    setting: str | None = strawberry.field(default=None, description="The setting or harness.")
    source: str | None = strawberry.field(default=None, description="Where the score came from.")
    published_on: Date | None = strawberry.field(
        default=None, description="When the score was published."
    )
    note: str | None = strawberry.field(default=None, description="A note the source gives.")
    interval: IntervalInput | None = strawberry.field(
        default=None, description="The score's interval, if the source publishes one."
    )
    standard_error: float | None = strawberry.field(
        default=None, description="The score's standard error, if the source publishes it."
    )
    sample_size: int | None = strawberry.field(
        default=None,
        description="How many tasks, questions or votes it rests on, if the source says.",
    )
    reported_by: SourceKind | None = strawberry.field(
        default=None,
        description="Who reported this score, where not the benchmark's source (`source.kind`).",
    )


@strawberry.input(description="Every row read from a benchmark's leaderboard on one day.")
class LeaderboardReadInput:
    read_on: Date = strawberry.field(
        description="The day the source was read: not in the future, not before the last read."
    )
    entries: list[EntryInput] = strawberry.field(
        description="The whole leaderboard as read: one row per model and setting."
    )
    allow_removals: bool = strawberry.field(
        default=False,
        description=(
            "Set when the source dropped rows: a read that leaves out rows of the current "
            "leaderboard is refused otherwise, naming them (a partial read is an easy mistake)."
        ),
    )


@strawberry.input(description="How a benchmark scores models.")
class MetricInput:
    name: str = strawberry.field(description="What is measured, e.g. `Accuracy`.")
    unit: MetricUnit = strawberry.field(description="The unit of scores.")
    higher_is_better: bool = strawberry.field(default=True, description="Higher is better.")


@strawberry.input(description="Where a benchmark's leaderboard is read from.")
class SourceInput:
    name: str = strawberry.field(description="E.g. `Official leaderboard`.")
    url: str | None = strawberry.field(default=None, description="An http(s) address.")
    kind: SourceKind | None = strawberry.field(
        default=None, description="Who reports its scores; null if unknown."
    )
    lab: str | None = strawberry.field(
        default=None, description="For a lab's report (MODEL_DEVELOPER): the lab's slug."
    )


@strawberry.input(description="A headline result a lab reported in a model card.")
class ModelCardReportInput:
    model_name: str = strawberry.field(description="The model, named as the lab names it.")
    score: float = strawberry.field(description="The score the lab reported.")
    reported_on: Date | None = strawberry.field(default=None, description="When it was published.")
    url: str | None = strawberry.field(default=None, description="The model card or launch post.")


@strawberry.input(
    description=(
        "A benchmark's descriptive data. Creating one needs `name`, `metric` and `category`; "
        "on update, fields left out stay as they are."
    )
)
class BenchmarkInput:
    name: str | None = UNSET
    description: str | None = UNSET
    note: str | None = UNSET
    metric: MetricInput | None = UNSET
    parent: str | None = strawberry.field(
        default=UNSET, description="Slug of the parent record this is a track of; null for none."
    )
    track_position: int | None = strawberry.field(
        default=UNSET, description="Its place among its parent's tracks (1 first)."
    )
    made_by: str | None = strawberry.field(default=UNSET, description="Slug of a known lab.")
    released_on: YearMonth | None = UNSET
    kind: Kind | None = UNSET
    level: Level | None = UNSET
    scoring: Scoring | None = UNSET
    answer_format: AnswerFormat | None = UNSET
    task_availability: TaskAvailability | None = UNSET
    status: Status | None = strawberry.field(default=UNSET, description="IN_USE when created.")
    category: str | None = strawberry.field(default=UNSET, description="Slug of a known category.")
    prominence: int | None = strawberry.field(
        default=UNSET, description="Editorial order within its category (higher first; 0 new)."
    )
    ceiling: float | None = UNSET
    test_set_published_on: YearMonth | None = strawberry.field(
        default=UNSET,
        description="When its test set became public, if not its release month.",
    )
    task_count: int | None = strawberry.field(
        default=UNSET, description="How many tasks its test set holds, where its source says so."
    )
    source: SourceInput | None = UNSET
    model_card_reports: list[ModelCardReportInput] | None = UNSET


@strawberry.input(
    description="A model we track. Creating one needs `name`; on update, fields left out stay."
)
class ModelInput:
    name: str | None = UNSET
    aliases: list[str] | None = strawberry.field(
        default=UNSET,
        description="Other names leaderboards use for it; each belongs to one model only.",
    )
    lab: str | None = strawberry.field(default=UNSET, description="Slug of a known lab.")
    released_on: YearMonth | None = UNSET
    capability_index_rank: int | None = UNSET


@strawberry.input(description="A lab, or a category: a slug and a name.")
class SlugAndNameInput:
    slug: str = strawberry.field(description="Lowercase letters and digits joined by `-`.")
    name: str


def as_plain(value: Any) -> Any:
    """An input as plain data for the editor: fields left out dropped, enums by name."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: as_plain(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if getattr(value, f.name) is not UNSET
        }
    if isinstance(value, list):
        return [as_plain(item) for item in value]
    if isinstance(value, Enum):
        return value.name
    return value


def camel_case(location: tuple[str | int, ...]) -> tuple[str | int, ...]:
    """A field path as GraphQL clients spell it: `entries[3].model_name` → `modelName`."""
    return tuple(
        re.sub(r"_([a-z])", lambda m: m.group(1).upper(), part) if isinstance(part, str) else part
        for part in location
    )
