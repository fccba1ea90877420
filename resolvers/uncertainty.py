"""How uncertain a score is: its interval as published, or one computed from what was published.

From a standard error: score ± 1.959964 * SE (a normal 95% interval). For a PERCENT metric with
only a sample size: the Wilson score interval at 95%, which stays within 0-100 and behaves at
scores near 0 and 100 (where score ± 2 SE would not). Otherwise there is none: the score is a
point. (A few lines of arithmetic: statsmodels' `proportion_confint` gives the same, at the cost
of numpy and scipy.)
"""

import math
from dataclasses import dataclass

from store import EntryDoc, MetricUnit

Z_95 = 1.959964
"""The standard normal quantile of a two-sided 95% interval."""
DEFAULT_LEVEL = 0.95


@dataclass(frozen=True, slots=True)
class Interval:
    low: float
    high: float
    level: float
    computed: bool
    """False when published with the score; true when the almanac computed it."""


def wilson_interval(
    successes_share: float, sample_size: int, z: float = Z_95
) -> tuple[float, float]:
    """The Wilson score interval of a proportion `successes_share` (0-1) out of `sample_size`."""
    n, p = sample_size, successes_share
    spread = z * z / n
    centre = (p + spread / 2) / (1 + spread)
    half = z * math.sqrt(p * (1 - p) / n + spread / (4 * n)) / (1 + spread)
    return max(0.0, centre - half), min(1.0, centre + half)


def interval_of(entry: EntryDoc, unit: str) -> Interval | None:
    """The entry's interval as published, else computed from its standard error, else (PERCENT
    only) from its sample size; None when nothing says how uncertain it is."""
    score = entry["score"]
    published = entry.get("interval")
    if published is not None:
        return Interval(published["low"], published["high"], published["level"], computed=False)
    standard_error = entry.get("standard_error")
    if standard_error is not None:
        half = Z_95 * standard_error
        return Interval(score - half, score + half, DEFAULT_LEVEL, computed=True)
    sample_size = entry.get("sample_size")
    if sample_size is not None and unit == MetricUnit.PERCENT.name:
        low, high = wilson_interval(score / 100, sample_size)
        # Rounding aside, the interval holds the score: the rank rules rely on it.
        return Interval(min(low * 100, score), max(high * 100, score), DEFAULT_LEVEL, True)
    return None


def bounds(entry: EntryDoc, unit: str) -> tuple[float, float]:
    """The entry's interval as (low, high), or its score at both ends where it has none."""
    return interval_bounds(interval_of(entry, unit), entry["score"])


def interval_bounds(interval: Interval | None, score: float) -> tuple[float, float]:
    """`bounds` of an entry of `score` whose `interval_of` is `interval` (already computed)."""
    if interval is None:
        return score, score
    return interval.low, interval.high
