"""Cursors and page bounds."""

import pytest

from api_errors import ApiError
from schema.vocabulary import (
    MAX_PAGE_SIZE,
    connection,
    decode_cursor,
    encode_cursor,
    page,
)


def test_cursors_round_trip_and_are_opaque() -> None:
    for offset in (0, 7, 12345):
        cursor = encode_cursor(offset)
        assert not cursor.isdigit()
        assert decode_cursor(cursor) == offset


@pytest.mark.parametrize("cursor", ["", "bm90IGEgY3Vyc29y", "!!!", encode_cursor(3) + "x"])
def test_foreign_cursors_are_refused(cursor: str) -> None:
    with pytest.raises(ApiError):
        decode_cursor(cursor)


def test_page_bounds() -> None:
    assert page(MAX_PAGE_SIZE, None).size == MAX_PAGE_SIZE
    for first in (-1, MAX_PAGE_SIZE + 1):
        with pytest.raises(ApiError):
            page(first, None)


def test_connection_page_info() -> None:
    items = list(range(10))
    at = page(4, encode_cursor(3))
    result = connection(at.of(items), at=at, total_count=len(items))
    assert result.nodes == [4, 5, 6, 7]
    assert (result.page_info.has_previous_page, result.page_info.has_next_page) == (True, True)
    assert result.page_info.end_cursor == encode_cursor(7)
    last = page(4, result.page_info.end_cursor)
    tail = connection(last.of(items), at=last, total_count=len(items))
    assert tail.nodes == [8, 9]
    assert tail.page_info.has_next_page is False
