"""What each store call is, by its method's name: a read and what it depends on, a write, a
cursor, or what lives as long as the process. The interface (store.interface) declares it on
each method's line (`@reads(rule)`, `@writes`, `@cursor`, `@lifelong`); the views of a store
(store.views) read it here.

A read names what it depends on, the subjects (store.subjects) of an answer computed from it,
by what it asked and what it found: a benchmark asked for by slug depends on that benchmark
(found or not: creating it changes the answer); a sibling slice on its category's membership
and on each benchmark shown; a catalog page on the catalog and on each row and the leaders kept
with it. A method declared without a rule depends on everything, so a new read is never reused
wrongly, only too rarely.
"""

from collections.abc import Callable, Iterable
from enum import Enum
from typing import Any, TypeVar

from store import subjects as s
from store.queries import Neighbourhood

Rule = Callable[[tuple[Any, ...], Any], Iterable[str]]
"""A read's subjects, from its arguments (after `self`, by position) and its result."""

Method = TypeVar("Method", bound=Callable[..., Any])


class Call(Enum):
    """How a view of the store treats a call."""

    READ = "read"  # noted (by its rule, or as depending on everything) and watched
    WRITE = "write"  # watched, not noted: a write, or what reads no almanac data
    CURSOR = "cursor"  # an async iterator: each batch watched as a call of its own
    LIFELONG = "lifelong"  # lives as long as the process (or a whole seed): neither


READS: dict[str, Rule] = {}
"""The rule of each read that has one, by method name."""
CALLS: dict[str, Call] = {}
"""What each method of the interface is, by name (a name not here: a read without a rule)."""


def _declare(method: Method, call: Call) -> Method:
    CALLS[method.__name__] = call
    return method


def reads(rule: Rule) -> Callable[[Method], Method]:
    """Declares a read whose answer depends on the subjects `rule` names."""

    def declared(method: Method) -> Method:
        READS[method.__name__] = rule
        return _declare(method, Call.READ)

    return declared


def writes(method: Method) -> Method:
    return _declare(method, Call.WRITE)


def cursor(method: Method) -> Method:
    return _declare(method, Call.CURSOR)


def lifelong(method: Method) -> Method:
    return _declare(method, Call.LIFELONG)


# The rules that take more than a line.


def nothing(args: tuple[Any, ...], found: Any) -> tuple[str, ...]:
    return ()


def neighbourhood(found: Neighbourhood) -> set[str]:
    request = found.request
    return {
        s.family(request.family),
        s.category(request.category),
        *s.of_summaries(found.family),
        *s.of_summaries(found.siblings),
    }


def benchmark_with_neighbourhood(args: tuple[Any, ...], found: Any) -> set[str]:
    slug = args[0]
    return {s.benchmark(slug)} if found is None else {s.benchmark(slug), *neighbourhood(found[1])}


def documents_by_slugs(args: tuple[Any, ...], _: Any) -> set[str]:
    collection, slugs = args
    if collection == "benchmarks":
        return {s.benchmark(slug) for slug in slugs}
    if collection == "models":
        return {s.model(slug) for slug in slugs}
    return {s.COLLECTION_SUBJECTS.get(collection, s.EVERYTHING)}


def models(args: tuple[Any, ...], found: list[Any]) -> set[str]:
    return {s.MODELS, *(s.model(doc["slug"]) for doc in found)}


def benchmarks_by_slugs(args: tuple[Any, ...], _: Any) -> set[str]:
    return {s.benchmark(slug) for slug in args[0]}


def models_by_slugs(args: tuple[Any, ...], _: Any) -> set[str]:
    return {s.model(slug) for slug in args[0]}
