"""Dates as the almanac stores and shows them: ISO strings, kept as they are stored."""

from collections.abc import Callable

import strawberry
from strawberry.types.scalar import ScalarDefinition

from api_errors import ApiError, shown
from store import (
    DATE_SHAPE,
    INSTANT_SHAPE,
    MONTH_SHAPE,
    Date,
    DateTime,
    YearMonth,
    as_date,
    is_instant,
    is_month,
)


def _parse_with(is_valid: Callable[[object], bool], shape: str) -> Callable[[object], str]:
    def parse(value: object) -> str:
        if not is_valid(value):
            raise ApiError(f"Expected a real date as {shape}, got {shown(value)}.")
        assert isinstance(value, str)
        return value

    return parse


SCALARS: dict[object, ScalarDefinition] = {
    Date: strawberry.scalar(
        name="Date",
        description="A calendar date in ISO 8601 form, `YYYY-MM-DD` (for example `2026-11-12`).",
        serialize=str,
        parse_value=_parse_with(lambda value: as_date(value) is not None, DATE_SHAPE),
    ),
    YearMonth: strawberry.scalar(
        name="YearMonth",
        description="A month of a year, `YYYY-MM` (for example `2023-09`): releases have no day.",
        serialize=str,
        parse_value=_parse_with(is_month, MONTH_SHAPE),
    ),
    DateTime: strawberry.scalar(
        name="DateTime",
        description="An instant in UTC, ISO 8601 to the second (`2026-11-12T09:30:00Z`).",
        serialize=str,
        parse_value=_parse_with(is_instant, INSTANT_SHAPE),
    ),
}
