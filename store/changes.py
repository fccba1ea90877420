"""Changes as data: every write records what it changed, and every process follows the record.

Each write appends a `Change` to the store's change log (a table on the embedded store, a
collection on MongoDB): its sequence number, when, what kind of change, the document changed
and its revision, who made it, and the subjects it touched (store.subjects). The log is kept
for a configurable period. It is what answer reuse reads to retire exactly the answers a
change touched, in this process and in every other one, and the base of the change feed.

`DataVersion` is this process's view of the log: a counter that moves with every change it
learns of, and for each subject, where the counter stood when it last changed. An answer
computed at one count stays good while none of the subjects it read changed since.

One way to wait on the log: each process's `LogFollower` is the one reader that polls it (every
`POLL_SECONDS`, `follow`); every other reader (subscriptions, the feed) reads the log, then waits
for the version to move (`DataVersion.newer_than`), which it does with every change this
process makes and every other one its follower reads.
"""

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Container, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum

from store.cursors import decode_numbered_cursor, encode_numbered_cursor
from store.subjects import EVERYTHING

log = logging.getLogger("almanac.store")

RETENTION = timedelta(days=90)
"""How long the log keeps a change, unless the store is told otherwise."""
POLL_SECONDS = 0.5
"""How often a process's follower reads the log for other processes' changes."""
RETRY_SECONDS = 5.0
"""How long a follower that could not read the log waits before it tries again."""
WAIT_SECONDS = 3.0
"""The longest a reader waits for the version to move before it reads the log again anyway: a
backstop, should the follower stall."""
FOLLOWED_AT_ONCE = 1000
"""Changes read from the log a round trip."""
PRUNE_SECONDS = 3600.0
"""How often a writer prunes the log of changes past the retention."""
GAP_SECONDS = 5.0
"""How long a reader of the log waits for a sequence number taken but not yet written
(MongoDB's writers take a number, then write the change): past it, the change is taken as lost
(its writer died) and passed (store.mongo's `changes_after`, `first_young_gap`)."""


class ChangeKind(StrEnum):
    BENCHMARK_CREATED = "benchmark_created"
    BENCHMARK_UPDATED = "benchmark_updated"
    READ_RECORDED = "read_recorded"
    MODEL_CREATED = "model_created"
    MODEL_UPDATED = "model_updated"
    LAB_CREATED = "lab_created"
    CATEGORY_CREATED = "category_created"
    PLACEMENTS_UPDATED = "placements_updated"
    """Tracked models placed anew on leaderboards, after a model's names changed (derived)."""
    API_KEY_CHANGED = "api_key_changed"
    SITE_CHANGED = "site_changed"
    RELEASE_PUBLISHED = "release_published"
    """A release made: the almanac frozen into files that never change (releases/)."""
    RELEASE_DELETED = "release_deleted"


RELEASE_RECORD_PREFIX = "release:"
"""The site record that announces a release (store.releases): its change is the release's."""

INTERNAL_KINDS = frozenset({ChangeKind.API_KEY_CHANGED, ChangeKind.SITE_CHANGED})
"""Changes of the API's own records, not of the almanac's data."""


@dataclass(frozen=True)
class ChangeDraft:
    """A change as a write describes it, before the log numbers it."""

    kind: ChangeKind
    subjects: frozenset[str]
    collection: str | None = None
    slug: str | None = None
    revision: int | None = None
    by: str | None = None
    category: str | None = None  # a benchmark's, after the change


@dataclass(frozen=True)
class Change(ChangeDraft):
    """A change as the log holds it: numbered and dated."""

    sequence: int = 0
    at: str = ""  # an instant, UTC (store.dates.INSTANT_SHAPE)


@dataclass(frozen=True)
class ChangeFilter:
    """Which changes of the log to read: each condition given narrows it (None: any)."""

    kinds: frozenset[ChangeKind] | None = None
    benchmarks: frozenset[str] | None = None  # slugs: changes of these benchmarks
    models: frozenset[str] | None = None  # slugs: changes of these models (with `benchmarks`,
    # changes of either)
    category: str | None = None  # of the benchmarks changed

    def documents(self) -> dict[str, frozenset[str]]:
        """The documents it names, by collection."""
        named = {"benchmarks": self.benchmarks, "models": self.models}
        return {collection: slugs for collection, slugs in named.items() if slugs is not None}


def now_instant() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def expired_before(retention: timedelta) -> str:
    """The instant before which changes are no longer kept."""
    return (datetime.now(UTC) - retention).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def document_change(
    collection: str,
    before: object | None,
    after: dict[str, object],
    subjects: Iterable[str],
    by: str | None = None,
) -> ChangeDraft:
    """The change of writing `after` in place of `before` (None: new): its kind, from the
    collection and what moved (a benchmark whose history grew by a read records that read);
    who made it, `by` or the document's `updated_by` (a lab or category has none)."""
    singular = {"benchmarks": "benchmark", "models": "model", "labs": "lab"}.get(
        collection, "category"
    )
    if collection == "api_keys":
        kind = ChangeKind.API_KEY_CHANGED
    elif collection == "site" and (release := _release_of(after)) is not None:
        # A release's record is written once, then once more only as its tombstone.
        kind = ChangeKind.RELEASE_PUBLISHED if before is None else ChangeKind.RELEASE_DELETED
        return ChangeDraft(kind, frozenset(subjects), "releases", release, by=by)
    elif collection == "site":
        kind = ChangeKind.SITE_CHANGED
    elif before is None:
        kind = ChangeKind(f"{singular}_created")
    elif collection == "benchmarks" and _read_recorded(after):
        kind = ChangeKind.READ_RECORDED
    else:
        kind = ChangeKind(f"{singular}_updated")
    revision = after.get("revision")
    category = after.get("category")
    return ChangeDraft(
        kind=kind,
        subjects=frozenset(subjects),
        collection=collection,
        slug=_text(after.get("slug")),
        revision=revision if isinstance(revision, int) else None,
        by=by or _text(after.get("updated_by")),
        category=_text(category.get("slug")) if isinstance(category, dict) else None,
    )


def _release_of(after: dict[str, object]) -> str | None:
    """The release a site record announces, by its id (the embedded store's `slug`, MongoDB's
    `_id`)."""
    ident = after.get("slug", after.get("_id"))
    if isinstance(ident, str) and ident.startswith(RELEASE_RECORD_PREFIX):
        return ident.removeprefix(RELEASE_RECORD_PREFIX)
    return None


def _read_recorded(doc: dict[str, object]) -> bool:
    history = doc.get("history")
    if not isinstance(history, list) or not history:
        return False
    last = history[-1]
    return isinstance(last, dict) and last.get("revision") == doc.get("revision")


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def first_young_gap(after: int, young: Iterable[int], written: Container[int]) -> int | None:
    """Where a reader after `after` must stop: the first of `young` (numbers of changes written
    within the gap grace, ascending) that a number taken but not written precedes, or None.

    A gap is as old as the change written after it (a number is taken before any later one),
    so only a gap just before a young change can still be filled. `written` holds the numbers
    before young changes that are in the log (old changes, looked up)."""
    young = list(young)
    present = set(young)
    for number in young:
        before = number - 1
        if before > after and before not in present and before not in written:
            return number
    return None


class DataVersion:
    """This process's view of the change log: a count that moves with every change it learns
    of (`bump`), and where the count stood when each subject last changed. `known` is False
    while the log cannot be followed: then nothing computed from the data is reused.
    """

    def __init__(self, *, known: bool) -> None:
        self.known = known
        self._count = 0
        self._changed: dict[str, int] = {}
        self._everything = 0  # the count at the last change that may have touched anything
        self.changed_at = time.monotonic()
        """When it last moved (the clock of `time.monotonic`)."""
        self.last_change: float | None = None
        """When it last moved for a change of the data (Unix time), not for a stream reopened."""
        self.resets = 0
        """How often this process could not tell what changed, and so retired everything."""
        self.applied_through = 0
        """Every change numbered up to it has been applied here (the follower keeps it): what an
        answer computed now reflects, and what a reader asking for a minimum change waits for."""
        self._moved = asyncio.Event()  # set, and replaced, by each `bump`
        self._advanced = asyncio.Event()  # set, and replaced, as `applied_through` moves
        self._watchers: list[Callable[[frozenset[str] | None], None]] = []

    def watch(self, watcher: Callable[[frozenset[str] | None], None]) -> None:
        """Call `watcher` with the subjects of every change counted from now on (None: it may
        have touched anything), as it is counted: how kept answers learn they went stale."""
        self._watchers.append(watcher)

    def unwatch(self, watcher: Callable[[frozenset[str] | None], None]) -> None:
        """Stop calling `watcher` (an app that shuts down, its store living on)."""
        with contextlib.suppress(ValueError):
            self._watchers.remove(watcher)

    @property
    def current(self) -> int | None:
        return self._count if self.known else None

    def bump(self, subjects: Iterable[str] | None = None, *, change: bool = True) -> None:
        """Count a change of these subjects (None: of anything)."""
        self._count += 1
        touched = None if subjects is None else frozenset(subjects)
        if touched is None:
            self._everything = self._count
        else:
            for subject in touched:
                self._changed[subject] = self._count
        self.changed_at = time.monotonic()
        if change:
            self.last_change = time.time()
        moved, self._moved = self._moved, asyncio.Event()
        moved.set()
        for watcher in self._watchers:
            try:
                watcher(touched)
            except Exception:  # the change is made and counted: a watcher's fault stays its own
                log.exception("A watcher of the data version failed on a change.")

    async def newer_than(self, count: int, within: float = WAIT_SECONDS) -> bool:
        """Return once the count has moved past `count` (`bump`), or after `within` seconds
        (the backstop): whether it moved. What a reader of the log waits on between reads."""
        if self._count != count:
            return True
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(within):
                await self._moved.wait()
                return True
        return False

    async def reached(self, sequence: int) -> None:
        """Return once every change up to `sequence` has been applied here (`applied_through`):
        this process's own as it makes them, every other one as its follower reads it. Unbounded:
        the caller bounds the wait (a request, by its timeout)."""
        while self.applied_through < sequence:
            await self._advanced.wait()

    def advance(self, through: int) -> None:
        """Note every change up to `through` applied here, and wake the readers waiting for
        one (`reached`), whether or not the count moved with it (a follower started past
        changes made before this process)."""
        if through > self.applied_through:
            self.applied_through = through
            advanced, self._advanced = self._advanced, asyncio.Event()
            advanced.set()

    @property
    def count(self) -> int:
        """The count, known or not: what `newer_than` is given."""
        return self._count

    def reset(self, reason: str) -> None:
        """Retire everything: this process cannot tell what changed."""
        self.resets += 1
        log.warning("Cannot tell what changed (%s): every kept answer is retired.", reason)
        self.bump(change=False)

    def unchanged_since(self, version: int, reads: frozenset[str]) -> bool:
        """Whether nothing `reads` names changed since the count was `version`."""
        if not self.known:
            return False
        if version == self._count:
            return True
        if self._everything > version or EVERYTHING in reads:
            return False
        changed = self._changed
        return all(changed.get(subject, 0) <= version for subject in reads)


class LogFollower:
    """Applies the log's changes to this process's `DataVersion`, each once: this process's
    own as it makes them (`local`), every other as it reads them from the log (`apply`).

    A gap in the sequence is a change that is not in the log: pruned past the retention, or
    never written (a MongoDB writer that died between its write and its change; the store's
    read waits `GAP_SECONDS` for it first). It retires everything (`reset`).
    """

    def __init__(self, version: DataVersion) -> None:
        self.version = version
        self.followed = 0
        """The sequence number up to which every change was applied here."""
        self.started = False
        self._applied: set[int] = set()  # applied here, ahead of `followed`
        self._wanted = asyncio.Event()  # set by `applied`: read the log now, not at the poll

    def start(self, newest: int) -> None:
        """Follow from `newest`: everything up to it was stored before this process kept
        anything."""
        self.followed, self.started = max(self.followed, newest), True
        self._advance()

    def local(self, changes: Iterable[Change]) -> None:
        for change in changes:
            if change.sequence > self.followed and change.sequence not in self._applied:
                self._applied.add(change.sequence)
                self.version.bump(change.subjects)
        self._advance()

    async def catch_up(self, read: Callable[[int, int], Awaitable[list[Change]]]) -> None:
        """Apply every change `read` (a store's `changes_after`) finds after `followed`, a
        batch a round trip, up to the end of the log (or to a gap the store waits for)."""
        while changes := await read(self.followed, FOLLOWED_AT_ONCE):
            self.apply(changes)
            if len(changes) < FOLLOWED_AT_ONCE:
                return

    async def follow(
        self,
        read: Callable[[int, int], Awaitable[list[Change]]],
        newest: Callable[[], Awaitable[tuple[int, int]]],
        failures: tuple[type[Exception], ...] = (),
    ) -> None:
        """Apply the changes every other process logs, as it logs them, until cancelled: read
        the log (`read`, a store's `changes_after`) every `POLL_SECONDS`, from its newest
        change (`newest`, a store's `change_bounds`) if not `started`. While it cannot be read
        (one of `failures`), the version is not known: nothing computed from the data is
        reused."""
        failing = False
        while True:
            try:
                if not self.started:
                    self.start((await newest())[1])
                await self.catch_up(read)
                self.version.known, failing = True, False
                await self._next_poll()
            except failures as error:
                self.version.known = False
                if not failing:
                    log.warning(
                        "Cannot read the change log (%s); answers are not reused until it can. "
                        "Retrying every %.0f s.",
                        error,
                        RETRY_SECONDS,
                    )
                failing = True
                await asyncio.sleep(RETRY_SECONDS)

    async def _next_poll(self) -> None:
        """Until it is time to read the log again: `POLL_SECONDS`, or sooner if a reader wants
        a change not applied yet (cleared before the read, so a wish made during it counts)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(POLL_SECONDS):
                await self._wanted.wait()
        self._wanted.clear()

    async def applied(self, sequence: int) -> None:
        """Return once every change up to `sequence` is applied here, the log read for it at
        once rather than at the next poll (read-your-writes: a client waits). Unbounded: the
        caller bounds it."""
        if self.version.applied_through < sequence:
            self._wanted.set()
            await self.version.reached(sequence)

    def apply(self, changes: Iterable[Change]) -> None:
        """Apply changes read from the log after `followed`, oldest first."""
        for change in changes:
            if change.sequence <= self.followed:
                continue
            if change.sequence != self.followed + 1:
                missing = f"changes {self.followed + 1} to {change.sequence - 1}"
                self.version.reset(f"{missing} are not in the log")
            if change.sequence in self._applied:
                self._applied.discard(change.sequence)
            else:
                self.version.bump(change.subjects)
            self.followed = change.sequence
        self._advance()

    def _advance(self) -> None:
        """Move the version's `applied_through` past `followed` and the changes made here just
        after it, as far as they run without a gap."""
        through = max(self.version.applied_through, self.followed)
        while through + 1 in self._applied:
            through += 1
        self.version.advance(through)


class PruneClock:
    """When a writer next prunes the log of changes past the retention: at its first write,
    then once every `PRUNE_SECONDS`."""

    def __init__(self) -> None:
        self._due = 0.0

    def due(self) -> bool:
        """Whether to prune now (and, if so, not again for a while)."""
        if time.monotonic() < self._due:
            return False
        self._due = time.monotonic() + PRUNE_SECONDS
        return True


PUBLIC_KINDS = frozenset(kind for kind in ChangeKind if kind not in INTERNAL_KINDS)
"""The changes the feed and webhooks tell of: the almanac's data, not the API's own records."""
CHANGE_CURSOR_PREFIX = "change:"


def encode_change_cursor(sequence: int) -> str:
    """The cursor after the change numbered `sequence` (0: before the first): opaque to
    clients, the same for the feed, subscriptions, downloads and webhooks' events."""
    return encode_numbered_cursor(CHANGE_CURSOR_PREFIX, sequence)


def decode_change_cursor(cursor: str) -> int | None:
    """The sequence number a cursor of `encode_change_cursor` holds; None for anything else
    (not one this API gave out)."""
    return decode_numbered_cursor(CHANGE_CURSOR_PREFIX, cursor)


class ChangeReceipt:
    """What a writer's writes were logged as: the newest change's sequence number (None: no
    change yet). Given to the store's writes (`receipt=`) by whoever tells its caller the
    change it made (a mutation's `changeCursor`); noted in the write's own transaction."""

    def __init__(self) -> None:
        self.newest: int | None = None

    def note(self, changes: Iterable[Change]) -> None:
        for change in changes:
            if self.newest is None or change.sequence > self.newest:
                self.newest = change.sequence
