"""Cursor connections: `first`/`after` paging over an ordered list, with opaque cursors."""

import base64
import binascii
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Generic, TypeVar

import orjson
import strawberry

from api_errors import ApiError, shown
from store import decode_numbered_cursor, encode_numbered_cursor

T = TypeVar("T")
Item = TypeVar("Item")

MAX_PAGE_SIZE = 100
MAX_LIST_SLICE = 10_000
"""The most a list's `first` or `last` may ask for; the request's cost is the real limit."""
_CURSOR_PREFIX = "offset:"
_KEY_PREFIX = b"after:"

SliceArgument = Annotated[
    int,
    strawberry.argument(
        description=f"How many items to return, from 0 to {MAX_LIST_SLICE:,}; each is charged."
    ),
]


@strawberry.type(description="Where a page sits in the whole list (Relay cursor connections).")
class PageInfo:
    has_next_page: bool = strawberry.field(description="Whether items follow this page.")
    has_previous_page: bool = strawberry.field(description="Whether items precede this page.")
    start_cursor: str | None = strawberry.field(description="The first item's cursor.")
    end_cursor: str | None = strawberry.field(
        description="The last item's cursor: pass it as `after` for the next page."
    )


@strawberry.type(description="An item of a connection with its cursor.")
class Edge(Generic[T]):
    cursor: str = strawberry.field(description="Pass as `after` to continue after this item.")
    node: T = strawberry.field(description="The item.")


@strawberry.type(
    description=(
        "A page of a list. Ask for `nodes` for the items, or `edges` for items with cursors; "
        "pass `pageInfo.endCursor` as `after` to get the next page."
    )
)
class Connection(Generic[T]):
    total_count: int = strawberry.field(description="How many items the whole list holds.")
    nodes: list[T] = strawberry.field(description="The items of this page, in order.")
    edges: list[Edge[T]] = strawberry.field(description="The items with their cursors.")
    page_info: PageInfo = strawberry.field(description="Where this page sits in the list.")


@dataclass(frozen=True)
class Page:
    """Which slice of an ordered list a request asked for."""

    offset: int
    size: int

    def of(self, items: Sequence[Item]) -> list[Item]:
        return list(items[self.offset : self.offset + self.size])


def encode_cursor(offset: int) -> str:
    return encode_numbered_cursor(_CURSOR_PREFIX, offset)


def decode_cursor(cursor: str) -> int:
    offset = decode_numbered_cursor(_CURSOR_PREFIX, cursor)
    if offset is None:
        raise ApiError(f"`after` is not a cursor this API gave out: {shown(cursor)}.")
    return offset


def page(first: int, after: str | None) -> Page:
    """The slice `first`/`after` ask for; out-of-range values are the client's error."""
    offset = 0 if after is None else decode_cursor(after) + 1
    return Page(offset=offset, size=slice_size("first", first, MAX_PAGE_SIZE))


def slice_size(argument: str, value: int, maximum: int = MAX_LIST_SLICE) -> int:
    """How many items a `first` or `last` argument asks for, if within 0 and `maximum`."""
    if not 0 <= value <= maximum:
        raise ApiError(f"`{argument}` must be between 0 and {maximum}; got {value}.")
    return value


def connection(nodes: list[T], *, at: Page, total_count: int) -> Connection[T]:
    """The connection for `nodes`, the items found at `at` in a list of `total_count`."""
    return cursor_connection(
        nodes,
        [encode_cursor(at.offset + i) for i in range(len(nodes))],
        has_next_page=at.offset + len(nodes) < total_count,
        has_previous_page=at.offset > 0,
        total_count=total_count,
    )


def cursor_connection(
    nodes: list[T],
    cursors: list[str],
    *,
    has_next_page: bool,
    has_previous_page: bool,
    total_count: int,
) -> Connection[T]:
    """The connection for `nodes`, each with its cursor."""
    edges = [Edge(cursor=cursor, node=node) for cursor, node in zip(cursors, nodes, strict=True)]
    return Connection(
        total_count=total_count,
        nodes=nodes,
        edges=edges,
        page_info=PageInfo(
            has_next_page=has_next_page,
            has_previous_page=has_previous_page,
            start_cursor=edges[0].cursor if edges else None,
            end_cursor=edges[-1].cursor if edges else None,
        ),
    )


def encode_key_cursor(order: str, key: list[str | int]) -> str:
    """A cursor after an item of a list sorted on `key` (keyset paging): its order and key."""
    return base64.urlsafe_b64encode(_KEY_PREFIX + orjson.dumps([order, *key])).decode()


def decode_key_cursor(cursor: str, order: str, length: int) -> list[str | int]:
    """The key of the item a cursor of `order` points after."""
    try:
        text = base64.b64decode(cursor.encode(), altchars=b"-_", validate=True)
        if text.startswith(_KEY_PREFIX):
            value = orjson.loads(text[len(_KEY_PREFIX) :])
            if (
                isinstance(value, list)
                and len(value) == length + 1
                and value[0] == order
                and all(isinstance(part, str | int) for part in value[1:])
            ):
                return value[1:]
    except (binascii.Error, orjson.JSONDecodeError, ValueError):
        pass
    raise ApiError(f"`after` is not a cursor this API gave out for this order: {shown(cursor)}.")
