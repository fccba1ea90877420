"""A tool's score in the benchmark's unit, by the scale the tool declares for its metric and
the range the benchmark's unit declares; never guessed. A score outside its declared scale, or a
scale the unit cannot be reached from, is refused, naming both."""

from dataclasses import dataclass

from interchange.results import UNBOUNDED, Scale, ToolResult
from store import MetricUnit

PERCENT = Scale(0.0, 100.0)


@dataclass(frozen=True)
class Unit:
    """A benchmark's metric unit, and for POINTS its ceiling (the top of its own scale)."""

    name: str
    ceiling: float | None = None

    def scale(self) -> Scale | None:
        if self.name == MetricUnit.PERCENT.name:
            return PERCENT
        if self.name == MetricUnit.POINTS.name and self.ceiling is not None:
            return Scale(0.0, self.ceiling)
        if self.name == MetricUnit.ELO.name:
            return Scale(-UNBOUNDED, UNBOUNDED)
        return None


class Irreconcilable(Exception):
    """Why a score cannot be put in the benchmark's unit (one line, without the file)."""


def factor(result: ToolResult, unit: Unit) -> float:
    """What a score on the tool's scale is multiplied by to be in `unit`."""
    target = unit.scale()
    source = result.scale
    metric = f"metric {result.metric!r}" if result.metric else "its metric"
    if source is not None and not source.low <= result.score <= source.high:
        raise Irreconcilable(
            f"score {result.score:g} is outside the scale {source.describe()} the file declares"
        )
    if result.unit is not None and result.unit.casefold() == unit.name.casefold():
        return 1.0  # the file says its scores are in the benchmark's own unit
    if source is None:
        raise Irreconcilable(
            f"the file declares no scale for {metric}, so its scores cannot be put in the "
            f"benchmark's unit {unit.name}"
        )
    if target is None:
        raise Irreconcilable(
            f"the benchmark's unit {unit.name} has no declared range (no ceiling) to put "
            f"{source.describe()} in"
        )
    if source == target:
        return 1.0
    finite = all(
        abs(end) != UNBOUNDED for end in (source.low, source.high, target.low, target.high)
    )
    if finite and source.low == 0 and target.low == 0 and source.high > 0:
        return target.high / source.high
    raise Irreconcilable(
        f"scores on {source.describe()} ({metric}) cannot be put in the benchmark's unit "
        f"{unit.name} ({target.describe()})"
    )
