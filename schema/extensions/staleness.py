"""How fresh each kept answer is: when it went stale, and which to compute again first.

A change retires the kept answers that read something it touched (schema.extensions.answer_reuse).
Until one is computed again, a reader may be given the retired one for a bounded time after the
first change it misses (`ALMANAC_MAX_STALENESS_SECONDS`); so that time must be known. Every kept
answer is indexed by the subjects it read (store.subjects): a change marks the answers it
retires stale, with the moment, once (the first change each misses), and queues those asked for
recently to be computed again ahead of their readers (server.graphql.refresh), most asked first.

What is known of an answer's freshness is kept on the answer itself (`Watched`), and the index
is kept by the cache that holds the answers (`AnswerCache`): an answer it lets go leaves the
index with it, and nothing of it stays behind. Answers that read the same subjects (most do: the
same query for many variables, or many texts of one query) share one set of them (`interned`)
and one entry of the index (`Readers`), so an answer costs the index one key in a set.
"""

import asyncio
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from request_limits import BoundedCache
from store import EVERYTHING

K = TypeVar("K", bound=Hashable)

RECENT_SECONDS = 60.0
"""An answer asked for less recently than this is not computed again ahead of its readers: the
next reader computes it, if one comes."""


class Watched(Protocol):
    """What a kept answer carries of its freshness: what it read, how much and when it was
    last asked for, and since when it is stale (None: it is not)."""

    reads: frozenset[str]
    asks: float
    asked_at: float
    stale_since: float | None


W = TypeVar("W", bound=Watched)


@dataclass(slots=True, eq=False)
class Readers(Generic[K]):
    """The kept answers that read exactly `reads` (one set of subjects, shared by them all)."""

    reads: frozenset[str]
    keys: set[K] = field(default_factory=set)


class Staleness(Generic[K, W]):
    """The kept answers of one app by the subjects they read, and the queue of stale ones to
    refresh. `clock` is `time.monotonic` (a test may give its own). The answers are the ones
    an `AnswerCache` holds (none until one is made with this index)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.answers: AnswerCache[K, W] | None = None
        self.groups: dict[frozenset[str], Readers[K]] = {}  # by what they read
        self.readers: dict[str, set[frozenset[str]]] = {}  # subject -> the groups that read it
        self.queued: set[K] = set()
        self.ordered: list[K] = []  # the queue's current round, most asked last
        self.arrived = asyncio.Event()  # set when something is queued

    def interned(self, reads: frozenset[str]) -> frozenset[str]:
        """`reads`, as the one set of them the kept answers share (itself if none reads it)."""
        group = self.groups.get(reads)
        return reads if group is None else group.reads

    def kept(self, key: K, answer: W, previous: W | None) -> None:
        """Index `answer`, kept for `key` in place of `previous` (whose entry its cache let go):
        fresh, or stale since its `stale_since` (a change arrived while it was computed)."""
        # Asks halve with each answer kept: the most asked recently come first.
        answer.asks = 1.0 + previous.asks / 2 if previous is not None else 1.0
        answer.asked_at = self.clock()
        reads = answer.reads
        if (group := self.groups.get(reads)) is None:
            group = self.groups[reads] = Readers(reads)
            for subject in reads:
                self.readers.setdefault(subject, set()).add(reads)
        group.keys.add(key)
        if answer.stale_since is None:
            self.queued.discard(key)
        else:
            self._queue(key)

    def dropped(self, key: K, answer: W) -> None:
        """`answer`, kept for `key`, is let go: out of the index and the queue (a no-op for an
        answer never indexed)."""
        group = self.groups.get(answer.reads)
        if group is None or key not in group.keys:
            return
        group.keys.remove(key)
        self.queued.discard(key)
        if not group.keys:
            del self.groups[group.reads]
            for subject in group.reads:
                readers = self.readers[subject]
                readers.discard(group.reads)
                if not readers:
                    del self.readers[subject]

    def asked(self, answer: W) -> None:
        """Count a request for a kept answer."""
        answer.asks += 1
        answer.asked_at = self.clock()

    def changed(self, subjects: frozenset[str] | None) -> None:
        """A change of these subjects (None: of anything) is counted: the answers that read
        one go stale now, unless they went stale before, and are queued."""
        now = self.clock()
        if subjects is None:
            groups = list(self.groups.values())
        else:
            named = set().union(*(self.readers.get(s, ()) for s in (*subjects, EVERYTHING)))
            groups = [self.groups[reads] for reads in named]
        for group in groups:
            for key in group.keys:
                answer = self._peek(key)
                if answer is not None and answer.stale_since is None:
                    answer.stale_since = now
                self._queue(key)

    def stale_for(self, answer: W) -> float | None:
        """How long a kept answer has been stale (None: not known to be)."""
        return None if answer.stale_since is None else self.clock() - answer.stale_since

    def is_stale(self, key: K) -> bool:
        answer = self._peek(key)
        return answer is not None and answer.stale_since is not None

    def take(self) -> K | None:
        """The stale answer to refresh next, most asked first, out of the queue; None if none
        is queued. One not asked for recently is dropped from it."""
        if not self.ordered:
            self.ordered = sorted(self.queued, key=self._asks)
            self.queued.clear()
        recent = self.clock() - RECENT_SECONDS
        while self.ordered:
            key = self.ordered.pop()
            self.queued.discard(key)  # queued again during the round: this refresh serves it
            answer = self._peek(key)
            if answer is not None and answer.stale_since is not None and answer.asked_at >= recent:
                return key
        return None

    def __len__(self) -> int:
        """How many answers are queued to be refreshed."""
        return len(self.queued) + len(self.ordered)

    def _peek(self, key: K) -> W | None:
        return None if self.answers is None else self.answers.peek(key)

    def _asks(self, key: K) -> float:
        answer = self._peek(key)
        return answer.asks if answer is not None else 0.0

    def _queue(self, key: K) -> None:
        self.queued.add(key)
        self.arrived.set()


class AnswerCache(BoundedCache[K, W]):
    """The kept answers (a `BoundedCache`), those kept through `watched` indexed by what they
    read (`Staleness`): an answer it lets go (replaced, evicted, dropped) leaves the index at
    once. A lookup (`get`) is the bounded cache's own."""

    def __init__(
        self, max_bytes: int, value_size: Callable[[W], int], staleness: Staleness[K, W]
    ) -> None:
        super().__init__(max_bytes, value_size)
        self.staleness = staleness
        staleness.answers = self

    def watched(self, key: K, answer: W) -> bool:
        """Keep `answer` for `key`, indexed; False (and nothing kept) if it is too large."""
        previous = self.peek(key)
        if not self.put(key, answer):
            return False
        self.staleness.kept(key, answer, previous)
        return True

    def __setitem__(self, key: K, value: W) -> None:
        previous = self.peek(key)
        super().__setitem__(key, value)
        if previous is not None:  # replaced (if not evicted meanwhile: dropping is idempotent)
            self.staleness.dropped(key, previous)

    def __delitem__(self, key: K) -> None:
        answer = self.peek(key)
        super().__delitem__(key)
        if answer is not None:
            self.staleness.dropped(key, answer)
