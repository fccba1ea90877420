"""Dates as the almanac stores and shows them."""

import re
from typing import NewType

import strawberry

from schema.errors import BadUserInput

_DATE = re.compile(r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$")
_YEAR_MONTH = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")


def _parse_with(pattern: re.Pattern[str], shape: str) -> object:
    def parse(value: object) -> str:
        if not isinstance(value, str) or not pattern.match(value):
            raise BadUserInput(f"Expected a date as {shape}, got {value!r}.")
        return value

    return parse


Date = strawberry.scalar(
    NewType("Date", str),
    name="Date",
    description="A calendar date in ISO 8601 form, `YYYY-MM-DD` (for example `2026-11-12`).",
    serialize=str,
    parse_value=_parse_with(_DATE, "YYYY-MM-DD"),
)

YearMonth = strawberry.scalar(
    NewType("YearMonth", str),
    name="YearMonth",
    description="A month of a year, `YYYY-MM` (for example `2023-09`): release dates have no day.",
    serialize=str,
    parse_value=_parse_with(_YEAR_MONTH, "YYYY-MM"),
)
