"""Numbered cursors: each holds its number under its own prefix, and nothing else decodes."""

import base64

from hypothesis import given
from hypothesis import strategies as st

from store import decode_numbered_cursor, encode_numbered_cursor


@given(st.integers(min_value=0, max_value=10**18 - 1))
def test_a_cursor_gives_back_its_number(number: int) -> None:
    assert decode_numbered_cursor("page:", encode_numbered_cursor("page:", number)) == number


def test_a_cursor_of_another_prefix_or_shape_is_none() -> None:
    def raw(text: str) -> str:
        return base64.urlsafe_b64encode(text.encode()).decode()

    junk = [
        encode_numbered_cursor("change:", 3),  # another kind's
        raw("page:-1"),
        raw("page:01"),  # one number, one text
        raw("page:3 "),
        raw("page:²"),  # a digit to str.isdigit, not a number
        encode_numbered_cursor("page:", 10**18),  # past a 64-bit store's integer
        "",
        "not base64!",
        raw("page:") + "=",
    ]
    for cursor in junk:
        assert decode_numbered_cursor("page:", cursor) is None, cursor
    assert decode_numbered_cursor("page:", raw("page:0")) == 0
