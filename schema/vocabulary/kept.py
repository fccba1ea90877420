"""A list every request for one version of the data shares: computed once per version (a
derived leaderboard's rows, a benchmark's scores over time), never changed in place, with its
slices and the values GraphQL completed from it (schema.completion) kept beside it."""

from collections.abc import Iterable
from typing import Any, Optional, TypeVar

T = TypeVar("T")

MOST_SELECTIONS = 2
"""Selections whose completed values one list keeps (a page's rows, a client's own): a client
sending ever new selections makes the oldest make room, not memory grow."""
MOST_SLICES = 2
"""Slices one list keeps (`first: 100` on a longer leaderboard, `last: 10`, ...), the oldest
making room; a slice's completed value is a slice of its whole list's, so it holds no more."""


class Kept(list[T]):
    """A list kept per version of what it was computed from (see the module). Being shared,
    it is never changed in place: its slices are Kept lists of their own, made once, which
    know the `whole` they were taken from and where (`start`)."""

    __slots__ = ("completed", "slices", "start", "whole")

    def __init__(
        self, items: Iterable[T] = (), whole: Optional["Kept[T]"] = None, start: int = 0
    ) -> None:
        super().__init__(items)
        self.whole: Kept[T] = self if whole is None else whole
        self.start = start
        self.slices: dict[tuple[int, int], Kept[T]] = {}
        self.completed: dict[tuple[int, ...], tuple[object, Any]] = {}
        """GraphQL's completed value of this list under a selection, by the identities of the
        selection's nodes (held in the value, so that no other node takes their identity)."""

    def head(self, size: int) -> "Kept[T]":
        """The first `size` items, the same list each time it is asked."""
        return self._slice(0, min(size, len(self)))

    def tail(self, size: int) -> "Kept[T]":
        """The last `size` items, the same list each time it is asked."""
        return self._slice(max(len(self) - size, 0), len(self))

    def _slice(self, start: int, stop: int) -> "Kept[T]":
        if (start, stop) == (0, len(self)):
            return self
        found = self.slices.get((start, stop))
        if found is None:
            if len(self.slices) >= MOST_SLICES:
                del self.slices[next(iter(self.slices))]
            found = self.slices[(start, stop)] = Kept(self[start:stop], self, start)
        return found

    def keep_completed(self, nodes: tuple[object, ...], value: Any) -> None:
        """Keep `value`, completed under the selection of `nodes`, the oldest making room."""
        if len(self.completed) >= MOST_SELECTIONS:
            del self.completed[next(iter(self.completed))]
        self.completed[tuple(map(id, nodes))] = (nodes, value)

    def completed_under(self, nodes: tuple[object, ...]) -> Any | None:
        """The value kept for the selection of `nodes`, if any."""
        found = self.completed.get(tuple(map(id, nodes)))
        return None if found is None else found[1]
