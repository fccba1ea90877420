"""What a benchmark is made of besides its leaderboard: its metric, its source, its category,
its model-card reports; and the arguments its leaderboard fields share."""

from typing import Annotated, Self

import strawberry

from editing import MAX_MODEL_CARD_REPORTS
from resolvers import ReportFilter
from schema.types.lab import Lab
from schema.vocabulary import RECOMPUTED, MetricUnit, SourceKind, StoredFields, at_most
from store import CategoryCountDoc, Date, MetricDoc, SourceDoc

DEFAULT_LEADERBOARD_ROWS = 100
DEFAULT_SCORE_POINTS = 100
DEFAULT_LEADERS = 10
EVERYTHING = ReportFilter()

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


def report_filter(
    kinds: list[SourceKind] | None, exclude_self_reported: bool | None
) -> ReportFilter:
    """The entries `reportedBy` and `excludeSelfReported` let through."""
    names = None if kinds is None else frozenset(kind.name for kind in kinds)
    return ReportFilter(kinds=names, exclude_self_reported=bool(exclude_self_reported))


@strawberry.type(description="How a benchmark scores models.")
class Metric:
    name: str = strawberry.field(description="What is measured, e.g. `Executable rate`.")
    unit: MetricUnit = strawberry.field(description="The unit of scores, e.g. PERCENT.")
    higher_is_better: bool = strawberry.field(description="Whether a higher score is better.")

    @classmethod
    def from_doc(cls, doc: MetricDoc) -> Self:
        return cls(**METRIC_FIELDS.of(doc))


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
    def from_doc(cls, doc: SourceDoc | None) -> Self | None:
        return None if doc is None else cls(**SOURCE_FIELDS.of(doc))


METRIC_FIELDS = StoredFields(Metric, MetricDoc)
SOURCE_FIELDS = StoredFields(Source, SourceDoc)


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
