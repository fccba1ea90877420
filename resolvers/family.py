"""A benchmark's family (its parent record and tracks) and its siblings in the category."""

from dataclasses import dataclass

from resolvers.catalog import sort_benchmarks
from store.documents import BenchmarkDoc


@dataclass(frozen=True, slots=True)
class Family:
    parent: BenchmarkDoc | None
    tracks: list[BenchmarkDoc]


def family(benchmark: BenchmarkDoc, relatives: list[BenchmarkDoc]) -> Family:
    """The benchmark's parent, and the tracks of its family in the family's order.

    For a track these are its parent's tracks (itself included); for a parent, its own.
    """
    root = benchmark["parent"] or benchmark["slug"]
    parent = next((doc for doc in relatives if doc["slug"] == benchmark["parent"]), None)
    tracks = sorted(
        (doc for doc in relatives if doc["parent"] == root),
        key=lambda doc: (doc["track_position"] or 0, doc["name"].casefold()),
    )
    return Family(parent=parent, tracks=tracks)


def siblings(benchmark: BenchmarkDoc, category_members: list[BenchmarkDoc]) -> list[BenchmarkDoc]:
    """Other benchmarks of the category, without the page's own family, in the default order:
    in use first, then editorial prominence, then name."""
    root = benchmark["parent"] or benchmark["slug"]
    others = [doc for doc in category_members if (doc["parent"] or doc["slug"]) != root]
    return sort_benchmarks(others)
