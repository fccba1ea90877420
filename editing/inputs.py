"""What a write may carry, checked field by field (pydantic), the same for GraphQL and files.

A benchmark's or model's fields are all optional here: an update sets only the fields given
(`model_fields_set`); what a new document must have is checked where it is created.
"""

import re
from datetime import UTC, date, datetime
from enum import Enum
from functools import partial
from typing import Annotated, Any, TypeVar

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from editing.errors import InvalidInput, Problem
from store import (
    DATE_SHAPE,
    EARLIEST_YEAR,
    MONTH_SHAPE,
    AnswerFormat,
    Kind,
    Level,
    MetricUnit,
    Scoring,
    SourceKind,
    Status,
    TaskAvailability,
    as_date,
    is_month,
    too_early,
)

SLUG_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
SLUG_RULE = "lowercase letters a-z and digits, in words joined by single hyphens (e.g. 'qwen-14b')"
MAX_SLUG_LENGTH = 100

# What a terminal, a spreadsheet or a log reader acts on, and nobody types in a name: C0 and C1
# control characters (newline, ESC, NUL, ...) and DEL; the bidi controls (U+202E turns the text
# after it around); the line and paragraph separators.
CONTROL_CHARACTERS = "\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029"
# Unicode's noncharacters (U+FDD0-U+FDEF, and the last two code points of each of the 17
# planes): never text, and XML cannot hold U+FFFE or U+FFFF (an Atom feed could not be made).
NONCHARACTERS = "\ufdd0-\ufdef" + "".join(
    chr(plane << 16 | 0xFFFE) + chr(plane << 16 | 0xFFFF) for plane in range(17)
)
REFUSED_CHARACTERS = re.compile(f"[{CONTROL_CHARACTERS}{NONCHARACTERS}]")
NONCHARACTER = re.compile(f"[{NONCHARACTERS}]")

M = TypeVar("M", bound=BaseModel)

# Bounds on what the almanac holds, so that every list a query returns has a known largest
# size, which its cost uses (request_limits/cost.py, docs/partners.md).
MAX_READ_ROWS = 10_000
MAX_TRACKS = 20
MAX_CATEGORIES = 500
MAX_MODEL_CARD_REPORTS = 100
MAX_ALIASES = 50
MAX_PROMINENCE = 1_000_000
MAX_RANK = 1_000_000
MAX_SAMPLE_SIZE = 1_000_000_000


def _today(info: ValidationInfo) -> date:
    context = info.context or {}
    today: date = context.get("today") or datetime.now(UTC).date()
    return today


def _past_date(value: str, info: ValidationInfo) -> str:
    if (day := as_date(value)) is None:
        raise ValueError(f"expected a real date as {DATE_SHAPE}, got {value!r}")
    if day > _today(info):
        raise ValueError(f"{value} is in the future")
    return _not_too_early(value)


def _past_month(value: str, info: ValidationInfo) -> str:
    if not is_month(value):
        raise ValueError(f"expected a month as {MONTH_SHAPE}, got {value!r}")
    if value > _today(info).isoformat()[:7]:
        raise ValueError(f"{value} is in the future")
    return _not_too_early(value)


def _not_too_early(value: str) -> str:
    if too_early(value):
        raise ValueError(f"{value} is before {EARLIEST_YEAR}, the earliest the almanac keeps")
    return value


def control_character(text: str, allowed: str = "") -> str | None:
    """Why `text` cannot be stored, if it holds a control character (other than `allowed`) or
    a noncharacter."""
    for match in REFUSED_CHARACTERS.finditer(text):
        character = match.group()
        if character not in allowed:
            what = "noncharacter" if NONCHARACTER.match(character) else "control character"
            return (
                f"holds the {what} U+{ord(character):04X} at position {match.start() + 1}: "
                "only printable text is kept"
            )
    return None


# The checks are functions pydantic calls, not closures a factory makes at import, so that a
# mutant of one (docs/testing.md: mutmut switches mutants at call time) is what runs.
def _printable(value: Any, *, allowed: str = "") -> Any:
    """Refuses control characters before anything else (trimming included): a name sent as
    "\\r=1+1" is refused, not stored as "=1+1"."""
    if isinstance(value, str) and (problem := control_character(value, allowed)):
        raise ValueError(problem)
    return value


def _printable_lines(value: Any) -> Any:
    """`_printable`, line breaks allowed."""
    return _printable(value, allowed="\n")


def _without_negative_zero(value: float) -> float:
    return value + 0.0  # -0.0 + 0.0 is 0.0: a score of "-0" is stored and shown as 0


def _web_address(value: str) -> str:
    if not re.match(r"^https?://\S+$", value):
        raise ValueError(f"expected an http(s):// address, got {value!r}")
    return value


def _member(vocabulary_enum: type[Enum], value: str) -> str:
    names = [member.name for member in vocabulary_enum]
    if value not in names:
        raise ValueError(f"expected one of {', '.join(names)}, got {value!r}")
    return value


def _slug(value: str) -> str:
    if (problem := slug_problem(value)) is not None:
        raise ValueError(problem)
    return value


Slug = Annotated[str, AfterValidator(_slug)]
Name = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=300),
    BeforeValidator(_printable),
]
Text = Annotated[str, StringConstraints(max_length=10_000), BeforeValidator(_printable)]
Prose = Annotated[str, StringConstraints(max_length=10_000), BeforeValidator(_printable_lines)]
"""Text that may run over several lines (a description)."""
Score = Annotated[float, Field(allow_inf_nan=False), AfterValidator(_without_negative_zero)]
# Integer fields within bounds any client language holds, and the almanac needs.
Prominence = Annotated[int, Field(ge=-MAX_PROMINENCE, le=MAX_PROMINENCE)]
Rank = Annotated[int, Field(ge=1, le=MAX_RANK)]
PastDate = Annotated[str, AfterValidator(_past_date)]
PastMonth = Annotated[str, AfterValidator(_past_month)]
WebAddress = Annotated[str, AfterValidator(_web_address), BeforeValidator(_printable)]


class Input(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


SourceKindName = Annotated[str, AfterValidator(partial(_member, SourceKind))]
SampleSize = Annotated[int, Field(ge=1, le=MAX_SAMPLE_SIZE)]
StandardError = Annotated[float, Field(ge=0, allow_inf_nan=False)]


class IntervalFields(Input):
    """A score's interval as its source publishes it: `level` is its confidence (0.95: 95%)."""

    low: Score
    high: Score
    level: Annotated[float, Field(gt=0, lt=1)] = 0.95

    @model_validator(mode="after")
    def _ordered(self) -> "IntervalFields":
        if self.low > self.high:
            raise ValueError(f"low ({self.low:g}) is above high ({self.high:g})")
        return self


class EntryFields(Input):
    model_name: Name
    setting: Name | None = None
    score: Score
    source: Text | None = None
    published_on: PastDate | None = None
    note: Text | None = None
    # How uncertain the score is, as the source publishes it (resolvers.uncertainty).
    interval: IntervalFields | None = None
    standard_error: StandardError | None = None
    sample_size: SampleSize | None = None
    # Who reported it, where not the benchmark's source (resolvers.reporting).
    reported_by: SourceKindName | None = None

    @field_validator("interval")
    @classmethod
    def _holds_the_score(
        cls, interval: IntervalFields | None, info: ValidationInfo
    ) -> IntervalFields | None:
        score = info.data.get("score")  # absent when itself refused
        if (
            interval is not None
            and score is not None
            and not interval.low <= score <= interval.high
        ):
            raise ValueError(
                f"{interval.low:g}-{interval.high:g} does not hold the score {score:g}"
            )
        return interval


OMITTED_WHEN_EMPTY = ("interval", "standard_error", "sample_size", "reported_by")
"""An entry's fields that most sources never give: stored and exported only when given, so that
documents and files stay as small as they were."""


def kept_entry(entry: EntryFields) -> dict[str, Any]:
    """The entry as stored and exported: its fields, less those in `OMITTED_WHEN_EMPTY` unset."""
    dumped = entry.model_dump(mode="json")
    return {k: v for k, v in dumped.items() if v is not None or k not in OMITTED_WHEN_EMPTY}


class ReadFields(Input):
    """A leaderboard read: every row read from the source on `read_on`."""

    read_on: PastDate
    entries: Annotated[list[EntryFields], Field(max_length=MAX_READ_ROWS)]
    # Kept from an exported history on import; a new read is stamped with its writer.
    recorded_by: Name | None = None
    recorded_at: AwareDatetime | None = None
    # The request's say that rows left out were dropped by the source (not stored).
    allow_removals: bool = False


READ_REQUEST_ONLY = ("allow_removals",)
"""What a read request says that is not kept with the read."""


class MetricFields(Input):
    name: Name
    unit: Annotated[str, AfterValidator(partial(_member, MetricUnit))]
    higher_is_better: bool = True


class SourceFields(Input):
    name: Name
    url: WebAddress | None = None
    # Who reports its scores, and for a lab's report which lab (a known lab's slug).
    kind: SourceKindName | None = None
    lab: Slug | None = None


class ModelCardReportFields(Input):
    model_name: Name
    score: Score
    reported_on: PastDate | None = None
    url: WebAddress | None = None


class BenchmarkFields(Input):
    """A benchmark's descriptive data; `made_by` and `category` are slugs of known ones."""

    name: Name | None = None
    description: Prose | None = None
    note: Text | None = None
    metric: MetricFields | None = None
    parent: Slug | None = None
    track_position: Annotated[int, Field(ge=1, le=MAX_TRACKS)] | None = None
    made_by: Slug | None = None
    released_on: PastMonth | None = None
    kind: Annotated[str, AfterValidator(partial(_member, Kind))] | None = None
    level: Annotated[str, AfterValidator(partial(_member, Level))] | None = None
    scoring: Annotated[str, AfterValidator(partial(_member, Scoring))] | None = None
    answer_format: Annotated[str, AfterValidator(partial(_member, AnswerFormat))] | None = None
    task_availability: Annotated[str, AfterValidator(partial(_member, TaskAvailability))] | None = (
        None
    )
    status: Annotated[str, AfterValidator(partial(_member, Status))] | None = None
    category: Slug | None = None
    prominence: Prominence | None = None
    ceiling: Score | None = None
    # When its test set became public (else its release month), and how many tasks it has.
    test_set_published_on: PastMonth | None = None
    task_count: SampleSize | None = None
    source: SourceFields | None = None
    model_card_reports: (
        Annotated[list[ModelCardReportFields], Field(max_length=MAX_MODEL_CARD_REPORTS)] | None
    ) = None


class ModelFields(Input):
    """A tracked model; `lab` is the slug of a known lab."""

    name: Name | None = None
    aliases: Annotated[list[Name], Field(max_length=MAX_ALIASES)] | None = None
    lab: Slug | None = None
    released_on: PastMonth | None = None
    capability_index_rank: Rank | None = None


class LabFields(Input):
    slug: Slug
    name: Name


class CategoryFields(Input):
    slug: Slug
    name: Name


def parse(model: type[M], data: Any, *, today: date | None = None) -> M:
    """`data` checked as `model`, or `InvalidInput` naming every field at fault."""
    try:
        return model.model_validate(data, context={"today": today})
    except ValidationError as error:
        raise InvalidInput(
            [
                Problem(tuple(e["loc"]), e["msg"].removeprefix("Value error, "))
                for e in error.errors()
            ]
        ) from error


def slug_problem(slug: str) -> str | None:
    """Why `slug` is not a slug, in words (not the pattern), if it is not one."""
    if len(slug) > MAX_SLUG_LENGTH:
        return f"a slug has at most {MAX_SLUG_LENGTH} characters, not {len(slug)}"
    if not re.match(SLUG_PATTERN, slug):
        return f"{slug!r} is not a slug: a slug holds {SLUG_RULE}"
    return None


def check_slug(slug: str, location: tuple[str, ...] = ("slug",)) -> str:
    if (problem := slug_problem(slug)) is not None:
        raise InvalidInput.at(location, problem)
    return slug
