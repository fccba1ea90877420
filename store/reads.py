"""What an execution read: a view of a store that notes the subjects (store.subjects) of every
read made through it, so that an answer computed from them is retired by exactly the changes
that touch one of them.

Each read names what it depends on by what it asked and what it found: a benchmark asked for by
slug depends on that benchmark (found or not: creating it changes the answer); a sibling slice
on its category's membership and on each benchmark shown; a catalog page on the catalog and on
each row and the leaders kept with it. A method without a rule here depends on everything, so
a new read is never reused wrongly, only too rarely. Writes pass through as they are.
"""

from collections.abc import Callable, Iterable
from functools import wraps
from inspect import signature
from typing import Any, cast

from store import subjects as s
from store.changes import DataVersion
from store.queries import Neighbourhood, Store

Rule = Callable[[tuple[Any, ...], Any], Iterable[str]]
"""A read's subjects, from its arguments (after `self`) and its result."""


def _neighbourhood(found: Neighbourhood) -> set[str]:
    request = found.request
    return {
        s.family(request.family),
        s.category(request.category),
        *s.of_summaries(found.family),
        *s.of_summaries(found.siblings),
    }


def _benchmark_with_neighbourhood(args: tuple[Any, ...], found: Any) -> set[str]:
    slug = args[0]
    return {s.benchmark(slug)} if found is None else {s.benchmark(slug), *_neighbourhood(found[1])}


def _documents_by_slugs(args: tuple[Any, ...], _: Any) -> set[str]:
    collection, slugs = args
    if collection == "benchmarks":
        return {s.benchmark(slug) for slug in slugs}
    if collection == "models":
        return {s.model(slug) for slug in slugs}
    return {s.COLLECTION_SUBJECTS.get(collection, s.EVERYTHING)}


def _models(found: list[Any]) -> set[str]:
    return {s.MODELS, *(s.model(doc["slug"]) for doc in found)}


READS: dict[str, Rule] = {
    "ping": lambda args, found: (),
    "documents_by_slugs": _documents_by_slugs,
    "benchmarks_by_slugs": lambda args, found: {s.benchmark(slug) for slug in args[0]},
    "benchmark_with_neighbourhood": _benchmark_with_neighbourhood,
    "neighbourhoods": lambda args, found: set().union(*map(_neighbourhood, found)),
    "benchmarks_with_model_keys": lambda args, found: {s.LISTINGS, *s.of_benchmarks(found)},
    "leaderboard_size": lambda args, found: {s.benchmark(args[0])},
    "benchmark_page": lambda args, found: {s.CATALOG, *s.of_summaries(found[0])},
    "model_results": lambda args, found: {s.ranks(args[0]), *s.of_benchmarks(found[0])},
    "benchmark_parents": lambda args, found: {s.CATALOG},
    "categories": lambda args, found: {s.CATALOG},
    "models_by_keys": lambda args, found: _models(found),
    "models_by_slugs": lambda args, found: {s.model(slug) for slug in args[0]},
    "models": lambda args, found: _models(found),
    "item_counts": lambda args, found: {s.CATALOG, s.MODELS, s.LABS, s.CATEGORIES},
    "site_figures": lambda args, found: {s.SITE},
    "provenance": lambda args, found: {s.SITE},
    "labs": lambda args, found: {s.LABS},
    "known_categories": lambda args, found: {s.CATEGORIES},
    "api_key": lambda args, found: {s.KEYS},
    "api_keys": lambda args, found: {s.KEYS},
}
PASSED_THROUGH = frozenset(
    {
        "replace",
        "insert",
        "insert_many",
        "replace_at_revision",
        "write_batch",
        "revoke_api_key",
        "set_api_key_budget",
        "set_tracked_ranks",
        "mark_seed",
        "seed_lock",
        "follow_changes",
        "close",
        "backup",
    }
)
"""Writes, and what reads no almanac data: not noted. (The change log's reads have no rule:
every change changes the log.)"""


class ReadsNoted:
    """`inner`, with the subjects of every read made through it added to `read`."""

    def __init__(self, inner: Store, read: set[str]) -> None:
        self.inner = inner
        self.read = read

    @property
    def version(self) -> DataVersion:  # read on every request: no __getattr__ lookup
        return self.inner.version

    def __getattr__(self, name: str) -> Any:
        found = getattr(self.inner, name)
        if name in PASSED_THROUGH or not callable(found):
            return found
        rule = READS.get(name)
        if rule is None:  # a read without a rule: anything may change its answer
            self.read.add(s.EVERYTHING)
            return found

        @wraps(found)
        async def noted(*args: Any, **named: Any) -> Any:
            result = await found(*args, **named)
            if named:  # the rules read arguments by position
                bound = signature(found).bind(*args, **named)
                args = tuple(bound.arguments.values())
            self.read.update(rule(args, result))
            return result

        return noted


def noting_reads(store: Store, read: set[str]) -> Store:
    """`store`, noting in `read` the subjects of every read made through it."""
    return cast(Store, ReadsNoted(store, read))
