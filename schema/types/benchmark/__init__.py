"""The Benchmark type (benchmark.py) apart from how it loads (loading.py): what it is made of
besides its leaderboard (parts.py), and its derived leaderboard, kept (derived.py)."""

from schema.types.benchmark.benchmark import (
    Benchmark,
    benchmark_page,
    benchmarks_from_docs,
    benchmarks_from_summaries,
)
from schema.types.benchmark.loading import SIBLINGS_WITH_A_BENCHMARK
from schema.types.benchmark.parts import Category, Metric, ModelCardReport, ModelCardReports, Source

__all__ = [
    "SIBLINGS_WITH_A_BENCHMARK",
    "Benchmark",
    "Category",
    "Metric",
    "ModelCardReport",
    "ModelCardReports",
    "Source",
    "benchmark_page",
    "benchmarks_from_docs",
    "benchmarks_from_summaries",
]
