"""How fresh each kept answer is: when it went stale, and which to compute again first.

A change retires the kept answers that read something it touched (schema.extensions.answer_reuse).
Until one is computed again, a reader may be given the retired one for a bounded time after the
first change it misses (`ALMANAC_MAX_STALENESS_SECONDS`); so that time must be known. Every kept
answer is indexed by the subjects it read (store.subjects): a change marks the answers it
retires stale, with the moment, once (the first change each misses), and queues those asked for
recently to be computed again ahead of their readers (server.graphql.refresh), most asked first.
An entry lives as long as its answer does: it holds its answer weakly, so an answer the bounded
cache lets go takes its entry with it.
"""

import asyncio
import time
import weakref
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

from store import EVERYTHING

K = TypeVar("K", bound=Hashable)

RECENT_SECONDS = 60.0
"""An answer asked for less recently than this is not computed again ahead of its readers: the
next reader computes it, if one comes."""


@dataclass(slots=True, eq=False)
class Watched:
    """A kept answer's entry: its answer (weakly), what it read, how much and when it was last
    asked for, and since when it is stale (None: it is not)."""

    answer: "weakref.ref[object]"
    reads: frozenset[str]
    asks: float
    asked_at: float
    stale_since: float | None = None


class Staleness(Generic[K]):
    """The kept answers of one app by the subjects they read, and the queue of stale ones to
    refresh. `clock` is `time.monotonic` (a test may give its own)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.entries: dict[K, Watched] = {}
        self.readers: dict[str, set[K]] = {}  # subject -> the answers that read it
        self.queued: set[K] = set()
        self.ordered: list[K] = []  # the queue's current round, most asked last
        self.arrived = asyncio.Event()  # set when something is queued

    def kept(
        self, key: K, answer: object, reads: frozenset[str], stale_since: float | None
    ) -> None:
        """Index `answer`, kept for `key` in place of any before it: fresh (None), or stale
        since `stale_since` (a change arrived while it was computed). Call it before the cache
        lets the previous answer go: its entry is replaced, not dropped."""
        now = self.clock()
        previous = self.entries.pop(key, None)
        if previous is not None:
            self._unindex(key, previous.reads)
        # Asks halve with each answer kept: the most asked recently come first.
        asks = 1.0 + (previous.asks / 2 if previous is not None else 0.0)
        reference = weakref.ref(answer, lambda gone: self._let_go(key, gone))
        self.entries[key] = Watched(reference, reads, asks, now, stale_since)
        for subject in reads:
            self.readers.setdefault(subject, set()).add(key)
        if stale_since is None:
            self.queued.discard(key)
        else:
            self._queue(key)

    def asked(self, key: K) -> None:
        """Count a request for `key`'s answer."""
        if (entry := self.entries.get(key)) is not None:
            entry.asks += 1
            entry.asked_at = self.clock()

    def changed(self, subjects: frozenset[str] | None) -> None:
        """A change of these subjects (None: of anything) is counted: the answers that read
        one go stale now, unless they went stale before, and are queued."""
        now = self.clock()
        if subjects is None:
            keys: set[K] = set(self.entries)
        else:
            keys = set().union(*(self.readers.get(s, ()) for s in (*subjects, EVERYTHING)))
        for key in keys:
            entry = self.entries[key]
            if entry.stale_since is None:
                entry.stale_since = now
            self._queue(key)

    def stale_for(self, key: K, answer: object) -> float | None:
        """How long `answer`, kept for `key`, has been stale (None: not known to be)."""
        entry = self.entries.get(key)
        if entry is None or entry.answer() is not answer or entry.stale_since is None:
            return None
        return self.clock() - entry.stale_since

    def is_stale(self, key: K) -> bool:
        entry = self.entries.get(key)
        return entry is not None and entry.stale_since is not None

    def take(self) -> K | None:
        """The stale answer to refresh next, most asked first, out of the queue; None if none
        is queued. One not asked for recently is dropped from it."""
        if not self.ordered:
            self.ordered = sorted(self.queued, key=self._asks)
            self.queued.clear()
        recent = self.clock() - RECENT_SECONDS
        while self.ordered:
            key = self.ordered.pop()
            entry = self.entries.get(key)
            if entry is not None and entry.stale_since is not None and entry.asked_at >= recent:
                return key
        return None

    def __len__(self) -> int:
        """How many answers are queued to be refreshed."""
        return len(self.queued) + len(self.ordered)

    def _asks(self, key: K) -> float:
        entry = self.entries.get(key)
        return entry.asks if entry is not None else 0.0

    def _queue(self, key: K) -> None:
        self.queued.add(key)
        self.arrived.set()

    def _let_go(self, key: K, gone: "weakref.ref[object]") -> None:
        entry = self.entries.get(key)
        if entry is not None and entry.answer is gone:  # not an answer kept in its place since
            del self.entries[key]
            self._unindex(key, entry.reads)
            self.queued.discard(key)

    def _unindex(self, key: K, reads: frozenset[str]) -> None:
        for subject in reads:
            readers = self.readers.get(subject)
            if readers is not None:
                readers.discard(key)
                if not readers:
                    del self.readers[subject]
