"""Dates as the almanac keeps them: ISO 8601 strings, checked here for every layer.

A date is `YYYY-MM-DD` (a day that exists), a month `YYYY-MM` (releases have no day), an instant
`YYYY-MM-DDTHH:MM:SSZ` (UTC, to the second). None is before `EARLIEST_YEAR`.
"""

import re
from datetime import date, datetime

EARLIEST_YEAR = 1900
"""No date or month before this year is stored: a year like 0001 is a typing mistake."""

DATE_SHAPE = "YYYY-MM-DD"
MONTH_SHAPE = "YYYY-MM"
INSTANT_SHAPE = "YYYY-MM-DDTHH:MM:SSZ"

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_MONTH = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")
_INSTANT = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")


def as_date(value: object) -> date | None:
    """The day a `YYYY-MM-DD` string names, or None if it is not one (no 2026-02-30)."""
    if not isinstance(value, str) or not _DATE.match(value):
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        return None


def is_month(value: object) -> bool:
    return isinstance(value, str) and _MONTH.match(value) is not None


def is_instant(value: object) -> bool:
    """Whether `value` is a `YYYY-MM-DDTHH:MM:SSZ` instant that exists."""
    if not isinstance(value, str) or not _INSTANT.match(value):
        return False
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def too_early(value: str) -> bool:
    """Whether a date or month is before `EARLIEST_YEAR`."""
    return int(value[:4]) < EARLIEST_YEAR
