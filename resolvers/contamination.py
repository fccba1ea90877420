"""Possible contamination: a model released after a benchmark's test set became public may have
seen it in training. A heuristic on release months, not a finding about any model."""

from store import BenchmarkSummaryDoc, ModelDoc, YearMonth


def when_test_set_published(benchmark: BenchmarkSummaryDoc) -> YearMonth | None:
    """When its test set became public: as stored, else the benchmark's release month."""
    return benchmark.get("test_set_published_on") or benchmark["released_on"]


def released_after_test_set(model: ModelDoc | None, benchmark: BenchmarkSummaryDoc) -> bool | None:
    """True when the model's release month is after the test set's, false when before; None
    when either is unknown or both are the same month (the order within it is unknown)."""
    published = when_test_set_published(benchmark)
    released = None if model is None else model["released_on"]
    if published is None or released is None or released == published:
        return None
    return released > published  # YYYY-MM strings order as months
