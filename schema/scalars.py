"""Dates as the almanac stores and shows them: ISO strings, kept as they are stored."""

import re
from collections.abc import Callable
from datetime import datetime

import strawberry
from strawberry.types.scalar import ScalarDefinition

from api_errors import ApiError, shown
from store.documents import Date, DateTime, YearMonth

_DATE = re.compile(r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$")
_YEAR_MONTH = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")
_DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")


def _parse_with(pattern: re.Pattern[str], shape: str) -> Callable[[object], str]:
    def parse(value: object) -> str:
        if not isinstance(value, str) or not pattern.match(value) or not _real(value):
            raise ApiError(f"Expected a real date as {shape}, got {shown(value)}.")
        return value

    return parse


def _real(value: str) -> bool:
    """Whether a well-shaped date names a day that exists (no 2026-02-30)."""
    try:
        datetime.fromisoformat(value if len(value) != 7 else value + "-01")
    except ValueError:
        return False
    return True


SCALARS: dict[object, ScalarDefinition] = {
    Date: strawberry.scalar(
        name="Date",
        description="A calendar date in ISO 8601 form, `YYYY-MM-DD` (for example `2026-11-12`).",
        serialize=str,
        parse_value=_parse_with(_DATE, "YYYY-MM-DD"),
    ),
    YearMonth: strawberry.scalar(
        name="YearMonth",
        description="A month of a year, `YYYY-MM` (for example `2023-09`): releases have no day.",
        serialize=str,
        parse_value=_parse_with(_YEAR_MONTH, "YYYY-MM"),
    ),
    DateTime: strawberry.scalar(
        name="DateTime",
        description="An instant in UTC, ISO 8601 to the second (`2026-11-12T09:30:00Z`).",
        serialize=str,
        parse_value=_parse_with(_DATE_TIME, "YYYY-MM-DDTHH:MM:SSZ"),
    ),
}
