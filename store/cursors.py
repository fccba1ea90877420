"""Opaque cursors that hold a number (a page's offset, a change's sequence) under a prefix of
their own, so that a cursor of one kind is never taken for another's."""

import base64
import binascii
import re

NUMBER = re.compile(r"0|[1-9][0-9]{0,17}")
"""A cursor's number: below 10^18, so within a signed 64-bit integer (a store's)."""


def encode_numbered_cursor(prefix: str, number: int) -> str:
    """The cursor holding `number` under `prefix`."""
    return base64.urlsafe_b64encode(f"{prefix}{number}".encode()).decode()


def decode_numbered_cursor(prefix: str, cursor: str) -> int | None:
    """The number an `encode_numbered_cursor` cursor of `prefix` holds; None for anything else
    (not one this API gave out)."""
    try:
        text = base64.b64decode(cursor.encode(), altchars=b"-_", validate=True).decode()
    except (binascii.Error, UnicodeError, ValueError):
        return None
    number = text.removeprefix(prefix)
    if not text.startswith(prefix) or not NUMBER.fullmatch(number):
        return None
    return int(number)
