"""The small fixed vocabularies of a benchmark's descriptive fields.

Documents store a member's name (`FUNCTION_CALLING`); its value is the wording the site shows.
The GraphQL schema publishes these same enums, and imports are checked against them.
"""

from enum import Enum


class Kind(Enum):
    KNOWLEDGE = "Knowledge"
    REASONING = "Reasoning"
    MATH = "Math"
    CODING = "Coding"
    FUNCTION_CALLING = "Function calling"
    AGENTIC = "Agentic tasks"
    MULTIMODAL = "Multimodal"
    LONG_CONTEXT = "Long context"
    SAFETY = "Safety"


class Level(Enum):
    SCHOOL = "School"
    UNIVERSITY = "University"
    PROFESSIONAL = "Professional"
    EXPERT = "Expert"


class Scoring(Enum):
    CHECKED_AUTOMATICALLY = "Checked automatically"
    JUDGED_BY_MODEL = "Judged by a model"
    JUDGED_BY_PEOPLE = "Judged by people"


class AnswerFormat(Enum):
    MULTIPLE_CHOICE = "Multiple choice"
    SHORT_ANSWER = "Short answer"
    FREE_TEXT = "Free text"
    CODE = "Code"
    AGENT_TASK = "Agent task"


class TaskAvailability(Enum):
    ALL_PUBLIC = "All public"
    PARTLY_PRIVATE = "Partly private"
    PRIVATE = "Private"


class Status(Enum):
    IN_USE = "In use"
    SATURATED = "Saturated: top models score near the ceiling"
    RETIRED = "Retired: no longer maintained or reported"


class MetricUnit(Enum):
    PERCENT = "Percent, 0 to 100"
    POINTS = "Points on the benchmark's own scale"
    ELO = "An Elo-style rating"


def score_range(unit: str) -> tuple[float, float] | None:
    """The scores a unit allows, inclusive; None where the benchmark's own scale decides."""
    return (0.0, 100.0) if unit == MetricUnit.PERCENT.name else None


class SourceKind(Enum):
    BENCHMARK_MAINTAINER = "The benchmark's own leaderboard"
    MODEL_DEVELOPER = "A lab's report or model card"
    THIRD_PARTY = "An independent evaluator"
    ALMANAC = "The almanac's own run"
