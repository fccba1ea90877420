"""The vocabularies of `store.vocabulary` and the rules' orders, published as GraphQL enums.

Each value's description is the wording the site shows for it.
"""

from enum import Enum

import strawberry

from resolvers import BenchmarkOrder
from store import (
    AnswerFormat,
    Kind,
    Level,
    MetricUnit,
    Scoring,
    SourceKind,
    Status,
    TaskAvailability,
)

__all__ = [
    "AnswerFormat",
    "BenchmarkOrder",
    "Kind",
    "Level",
    "MetricUnit",
    "Scoring",
    "SourceKind",
    "Status",
    "TaskAvailability",
]


def _publish(vocabulary: type[Enum], description: str) -> None:
    """Register the enum with Strawberry (in place), each value described by its wording."""
    strawberry.enum(vocabulary, description=description)
    for value in vocabulary.__strawberry_definition__.values:  # type: ignore[attr-defined]
        value.description = value.value


_publish(Kind, "What a benchmark mainly exercises.")
_publish(Level, "How hard the tasks are, by the schooling a person would need.")
_publish(Scoring, "How answers are scored.")
_publish(AnswerFormat, "The form a model's answer takes.")
_publish(TaskAvailability, "Whether the benchmark's tasks are published.")
_publish(Status, "Whether a benchmark still tells models apart.")
_publish(MetricUnit, "The unit of a benchmark's score.")
_publish(SourceKind, "Who reported a score.")

# The rules own the orders; this registers them as a GraphQL enum (in place).
strawberry.enum(
    BenchmarkOrder,
    name="BenchmarkOrder",
    description=(
        "How to order benchmarks. PROMINENCE (the default): in use first, then editorial "
        "prominence, then name. NAME: A to Z. NEWEST_RELEASE: newest release month first."
    ),
)
