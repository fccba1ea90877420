"""How far the leader is from the best score a benchmark can meaningfully show.

The ceiling is the stored one, else the end of the PERCENT scale (100, or 0 when lower is
better), else unknown. These are computed from the scores; a benchmark's `status` (IN_USE,
SATURATED, RETIRED) stays an editor's call, which they can inform.
"""

from resolvers.leaderboards import Row
from resolvers.uncertainty import bounds
from store import BenchmarkSummaryDoc, MetricUnit


def ceiling_of(benchmark: BenchmarkSummaryDoc) -> float | None:
    if benchmark["ceiling"] is not None:
        return benchmark["ceiling"]
    if benchmark["metric"]["unit"] == MetricUnit.PERCENT.name:
        return 100.0 if benchmark["metric"]["higher_is_better"] else 0.0
    return None


def headroom(benchmark: BenchmarkSummaryDoc, leader: Row | None) -> float | None:
    """The distance from the leader's score to the ceiling, toward better (negative when the
    leader is past a stored ceiling); None without a leader or a ceiling."""
    ceiling = ceiling_of(benchmark)
    if leader is None or ceiling is None:
        return None
    score = leader.entry["score"]
    distance = ceiling - score if benchmark["metric"]["higher_is_better"] else score - ceiling
    return round(distance, 9)  # 100 - 82.8 is 17.2, not 17.200000000000003


def near_ceiling(benchmark: BenchmarkSummaryDoc, leader: Row | None) -> bool | None:
    """Whether the leader's interval (or its score) reaches the ceiling."""
    ceiling = ceiling_of(benchmark)
    if leader is None or ceiling is None:
        return None
    low, high = bounds(leader.entry, benchmark["metric"]["unit"])
    return high >= ceiling if benchmark["metric"]["higher_is_better"] else low <= ceiling
