"""How lists of benchmarks are ordered (page-spec rule 9's default order, and the others)."""

from collections.abc import Iterable
from enum import Enum

from store import ModelDoc


class BenchmarkOrder(Enum):
    PROMINENCE = "prominence"
    NAME = "name"
    NEWEST_RELEASE = "newest_release"


def sort_models(docs: Iterable[ModelDoc]) -> list[ModelDoc]:
    """Models by name A to Z, ignoring case."""
    return sorted(docs, key=lambda doc: (doc["name"].casefold(), doc["slug"]))
