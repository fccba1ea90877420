"""The small fixed vocabularies of a benchmark's descriptive fields.

Each value's description is the wording the site shows for it.
"""

from enum import Enum

import strawberry

from resolvers.catalog import BenchmarkOrder

value = strawberry.enum_value


@strawberry.enum(description="What a benchmark mainly exercises.")
class Kind(Enum):
    KNOWLEDGE = value("KNOWLEDGE", description="Knowledge")
    REASONING = value("REASONING", description="Reasoning")
    MATH = value("MATH", description="Math")
    CODING = value("CODING", description="Coding")
    FUNCTION_CALLING = value("FUNCTION_CALLING", description="Function calling")
    AGENTIC = value("AGENTIC", description="Agentic tasks")
    MULTIMODAL = value("MULTIMODAL", description="Multimodal")
    LONG_CONTEXT = value("LONG_CONTEXT", description="Long context")
    SAFETY = value("SAFETY", description="Safety")


@strawberry.enum(description="How hard the tasks are, by the schooling a person would need.")
class Level(Enum):
    SCHOOL = value("SCHOOL", description="School")
    UNIVERSITY = value("UNIVERSITY", description="University")
    PROFESSIONAL = value("PROFESSIONAL", description="Professional")
    EXPERT = value("EXPERT", description="Expert")


@strawberry.enum(description="How answers are scored.")
class Scoring(Enum):
    CHECKED_AUTOMATICALLY = value("CHECKED_AUTOMATICALLY", description="Checked automatically")
    JUDGED_BY_MODEL = value("JUDGED_BY_MODEL", description="Judged by a model")
    JUDGED_BY_PEOPLE = value("JUDGED_BY_PEOPLE", description="Judged by people")


@strawberry.enum(description="The form a model's answer takes.")
class AnswerFormat(Enum):
    MULTIPLE_CHOICE = value("MULTIPLE_CHOICE", description="Multiple choice")
    SHORT_ANSWER = value("SHORT_ANSWER", description="Short answer")
    FREE_TEXT = value("FREE_TEXT", description="Free text")
    CODE = value("CODE", description="Code")
    AGENT_TASK = value("AGENT_TASK", description="Agent task")


@strawberry.enum(description="Whether the benchmark's tasks are published.")
class TaskAvailability(Enum):
    ALL_PUBLIC = value("ALL_PUBLIC", description="All public")
    PARTLY_PRIVATE = value("PARTLY_PRIVATE", description="Partly private")
    PRIVATE = value("PRIVATE", description="Private")


@strawberry.enum(description="Whether a benchmark still tells models apart.")
class Status(Enum):
    IN_USE = value("IN_USE", description="In use")
    SATURATED = value("SATURATED", description="Saturated: top models score near the ceiling")
    RETIRED = value("RETIRED", description="Retired: no longer maintained or reported")


@strawberry.enum(description="The unit of a benchmark's score.")
class MetricUnit(Enum):
    PERCENT = value("PERCENT", description="Percent, 0 to 100")
    POINTS = value("POINTS", description="Points on the benchmark's own scale")
    ELO = value("ELO", description="An Elo-style rating")


# The rules own the orders; this registers them as a GraphQL enum (in place).
strawberry.enum(
    BenchmarkOrder,
    name="BenchmarkOrder",
    description=(
        "How to order benchmarks. PROMINENCE (the default): in use first, then editorial "
        "prominence, then name. NAME: A to Z. NEWEST_RELEASE: newest release month first."
    ),
)
