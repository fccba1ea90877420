"""Which places a row could hold once its uncertainty counts: rank ranges, ties, the leaders.

Each row is an interval (low, high), or its score at both ends. Higher is better: a row is
surely above another when its interval lies wholly above (its low > the other's high). Its best
place is 1 + the rows surely above it; its worst, the rows not surely below it (their high ≥
its low), itself included. Lower is better mirrors this. With points only, tied scores share a
range (82.8 and 82.8: both 1-2), and a distinct score has one place.
"""

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple, Protocol

from resolvers.leaderboards import Row
from resolvers.uncertainty import Interval, interval_bounds, interval_of

Bounds = tuple[float, float]
"""A row's interval as (low, high), low ≤ high; a point is (score, score)."""


class RankRange(NamedTuple):
    """A row's best and worst places (a named tuple, as `Row` is: one a row)."""

    best: int
    worst: int


def rank_ranges(rows: Sequence[Bounds], *, higher_is_better: bool) -> list[RankRange]:
    """Each row's range of places among `rows`, in the order given."""
    if not higher_is_better:
        # Lower is better: the same rule on the negated scale.
        rows = [(-high, -low) for low, high in rows]
    # Counted by bisection over the sorted ends: a 10,000-row board stays quick.
    lows = sorted(low for low, _ in rows)
    highs = sorted(high for _, high in rows)
    count = len(rows)
    return [
        RankRange(
            1 + count - bisect_right(lows, high),  # best: lows > this high
            count - bisect_left(highs, low),  # worst: highs >= this low
        )
        for low, high in rows
    ]


def could_lead(ranges: Sequence[RankRange]) -> list[int]:
    """The positions of the rows whose best place is first, in the order given."""
    return [index for index, found in enumerate(ranges) if found.best == 1]


@dataclass(frozen=True)
class Board:
    """A leaderboard's rows (best first, as `leaderboard.leaderboard` orders them) with the
    ranges of their places, computed when first asked for."""

    rows: list[Row]
    unit: str
    higher_is_better: bool

    @cached_property
    def intervals(self) -> list[Interval | None]:
        """Each row's interval (`interval_of`), computed once for its ranges and its cells."""
        return [interval_of(row.entry, self.unit) for row in self.rows]

    @cached_property
    def ranges(self) -> list[RankRange]:
        return self._ranges_of(range(len(self.rows)))

    def range_of(self, row: Row) -> RankRange:
        return self.ranges[row.rank - 1]  # ranks are 1-based positions

    def tied_with_leader(self, row: Row) -> bool:
        """Whether the row could be first and is not the leader itself."""
        return row.rank != 1 and self.range_of(row).best == 1

    def leaders(self) -> list[Row]:
        """Every row that could be first, in leaderboard order."""
        return [self.rows[index] for index in could_lead(self.ranges)]

    def tracked_leaders(self) -> list[Row]:
        """Every tracked row that could be first among tracked rows, ranked among them only."""
        tracked = [place for place, row in enumerate(self.rows) if row.tracked]
        return [self.rows[tracked[index]] for index in could_lead(self._ranges_of(tracked))]

    def _ranges_of(self, places: Sequence[int]) -> list[RankRange]:
        """The ranges of the rows at these positions, ranked among them only."""
        rows, intervals = self.rows, self.intervals
        ends = [interval_bounds(intervals[place], rows[place].entry["score"]) for place in places]
        return rank_ranges(ends, higher_is_better=self.higher_is_better)


class Places(Protocol):
    """Where a leaderboard's rows could stand: a whole `Board`, or what is stored of one row."""

    @property
    def unit(self) -> str: ...
    def range_of(self, row: Row) -> RankRange: ...
    def tied_with_leader(self, row: Row) -> bool: ...


@dataclass(frozen=True)
class StoredPlaces:
    """One row's places, computed on its board when its benchmark was written and stored with
    it (a catalog row's leader: editing.derived), so that they need no board now."""

    unit: str
    places: RankRange
    tied: bool

    def range_of(self, row: Row) -> RankRange:
        return self.places

    def tied_with_leader(self, row: Row) -> bool:
        return self.tied
