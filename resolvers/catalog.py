"""How lists of benchmarks are ordered (page-spec rule 9's default order, and the others)."""

from collections.abc import Iterable
from enum import Enum

from store.documents import BenchmarkDoc, ModelDoc

IN_USE = "IN_USE"


class BenchmarkOrder(Enum):
    PROMINENCE = "prominence"
    NAME = "name"
    NEWEST_RELEASE = "newest_release"


def sort_benchmarks(
    docs: Iterable[BenchmarkDoc], order: BenchmarkOrder = BenchmarkOrder.PROMINENCE
) -> list[BenchmarkDoc]:
    """Benchmarks in the requested order; every order ends with the name, so it is total."""
    if order is BenchmarkOrder.NAME:
        return sorted(docs, key=_name_key)
    if order is BenchmarkOrder.NEWEST_RELEASE:
        by_name = sorted(docs, key=_name_key)
        # Stable sort: unknown release months go last, equal months keep name order.
        return sorted(by_name, key=lambda doc: doc["released_on"] or "", reverse=True)
    return sorted(
        docs, key=lambda doc: (doc["status"] != IN_USE, -doc["prominence"], *_name_key(doc))
    )


def _name_key(doc: BenchmarkDoc) -> tuple[str, str]:
    return (doc["name"].casefold(), doc["slug"])


def sort_models(docs: Iterable[ModelDoc]) -> list[ModelDoc]:
    """Models by name A to Z, ignoring case."""
    return sorted(docs, key=lambda doc: (doc["name"].casefold(), doc["slug"]))
