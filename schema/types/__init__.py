"""The almanac's object types: a benchmark (benchmark/: the type apart from how it loads), its
leaderboard rows and score points (leaderboard), its history of reads (history), a tracked
model (model) and where it stands (standing), a lab (lab), the change feed (changes), the
caller's budget (budget); and what an operation selects below a field (selections), read
before it runs so that a resolver reads no more than its answer shows.

The root operations (schema.query, schema.mutation, schema.subscription) import from here."""

from schema.types.benchmark import (
    SIBLINGS_WITH_A_BENCHMARK,
    Benchmark,
    Category,
    Metric,
    ModelCardReport,
    Source,
    benchmark_page,
    benchmarks_from_docs,
    benchmarks_from_summaries,
)
from schema.types.budget import RateLimit, rate_limit
from schema.types.changes import (
    ALL_PUBLIC,
    Change,
    ChangeConnection,
    ChangeFilterInput,
    ChangeKind,
    change_feed,
    cursor_place,
)
from schema.types.history import LeaderboardRead
from schema.types.lab import Lab
from schema.types.leaderboard import Interval, LeaderboardRow
from schema.types.model import Model
from schema.types.selections import LEADER_FIELDS, rows_select, siblings_shown

__all__ = [
    "ALL_PUBLIC",
    "LEADER_FIELDS",
    "SIBLINGS_WITH_A_BENCHMARK",
    "Benchmark",
    "Category",
    "Change",
    "ChangeConnection",
    "ChangeFilterInput",
    "ChangeKind",
    "Interval",
    "Lab",
    "LeaderboardRead",
    "LeaderboardRow",
    "Metric",
    "Model",
    "ModelCardReport",
    "RateLimit",
    "Source",
    "benchmark_page",
    "benchmarks_from_docs",
    "benchmarks_from_summaries",
    "change_feed",
    "cursor_place",
    "rate_limit",
    "rows_select",
    "siblings_shown",
]
