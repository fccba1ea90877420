"""The almanac's scalars: dates as it stores and shows them (ISO strings, kept as they are
stored), and a file sent with a request."""

import hashlib
from collections.abc import Callable
from typing import NewType

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


# What each scalar's text follows (`@specifiedBy`), for code generators: RFC 3339's full-date
# and date-time (section 5.6), ISO 8601's calendar month (YYYY-MM).
RFC_3339 = "https://www.rfc-editor.org/rfc/rfc3339#section-5.6"
ISO_8601 = "https://www.iso.org/iso-8601-date-and-time-format.html"
MULTIPART_SPEC = "https://github.com/jaydenseric/graphql-multipart-request-spec"

Upload = NewType("Upload", object)
"""A file sent with the request: an `UploadedFile` when it came as the multipart spec says."""


class UploadedFile(str):
    """A file sent with the request (server.graphql.multipart puts it where its map says): as
    text, `upload:<name>:<sha256>`, so that the variables still encode as JSON (a kept answer's
    key), with the file's name and bytes beside."""

    filename: str
    content: bytes

    def __new__(cls, filename: str, content: bytes) -> "UploadedFile":
        named = super().__new__(cls, f"upload:{filename}:{hashlib.sha256(content).hexdigest()}")
        named.filename, named.content = filename, content
        return named


SCALARS: dict[object, ScalarDefinition] = {
    Date: strawberry.scalar(
        name="Date",
        description="A calendar date, RFC 3339's full-date `YYYY-MM-DD` (e.g. `2026-11-12`).",
        specified_by_url=RFC_3339,
        serialize=str,
        parse_value=_parse_with(lambda value: as_date(value) is not None, DATE_SHAPE),
    ),
    YearMonth: strawberry.scalar(
        name="YearMonth",
        description="A month of a year, ISO 8601's `YYYY-MM` (`2023-09`): releases have no day.",
        specified_by_url=ISO_8601,
        serialize=str,
        parse_value=_parse_with(is_month, MONTH_SHAPE),
    ),
    DateTime: strawberry.scalar(
        name="DateTime",
        description="An instant in UTC, RFC 3339 date-time to the second (`2026-11-12T09:30:00Z`).",
        specified_by_url=RFC_3339,
        serialize=str,
        parse_value=_parse_with(is_instant, INSTANT_SHAPE),
    ),
    Upload: strawberry.scalar(
        name="Upload",
        description="A file, sent as a part of a multipart request (the GraphQL multipart "
        "request spec); only ever an argument (`importResults`).",
        specified_by_url=MULTIPART_SPEC,
        serialize=lambda value: value,
        parse_value=lambda value: value,
    ),
}
