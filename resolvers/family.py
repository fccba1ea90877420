"""A benchmark's family: its parent record and tracks."""

from dataclasses import dataclass

from store import BenchmarkDoc, BenchmarkSummaryDoc


@dataclass(frozen=True, slots=True)
class Family:
    parent: BenchmarkDoc | None
    tracks: list[BenchmarkDoc]


def family_root(benchmark: BenchmarkSummaryDoc) -> str:
    """The slug a family goes by: its parent record's, or the benchmark's own."""
    return benchmark["parent"] or benchmark["slug"]


def family(benchmark: BenchmarkSummaryDoc, relatives: list[BenchmarkDoc]) -> Family:
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
