"""A benchmark's family: its parent record and tracks."""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from store import BenchmarkSummaryDoc

B = TypeVar("B", bound=BenchmarkSummaryDoc)


@dataclass(frozen=True, slots=True)
class Family(Generic[B]):
    parent: B | None
    tracks: list[B]


def family_root(benchmark: BenchmarkSummaryDoc) -> str:
    """The slug a family goes by: its parent record's, or the benchmark's own."""
    return benchmark["parent"] or benchmark["slug"]


def family(benchmark: BenchmarkSummaryDoc, relatives: Sequence[B]) -> Family[B]:
    """The benchmark's parent, and the tracks of its family in the family's order.

    For a track these are its parent's tracks (itself included); for a parent, its own.
    """
    root = family_root(benchmark)
    parent = next((doc for doc in relatives if doc["slug"] == benchmark["parent"]), None)
    tracks = sorted(
        (doc for doc in relatives if doc["parent"] == root),
        key=lambda doc: (doc["track_position"] or 0, doc["name"].casefold()),
    )
    return Family(parent=parent, tracks=tracks)
