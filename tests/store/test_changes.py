"""The change log: every write records what it changed, in order, on both stores; every
process follows it, applying each change once, and retires everything when it cannot tell."""

import asyncio
import time
from datetime import timedelta
from typing import Any

import pytest
from pymongo import ReturnDocument

from store import ChangeReceipt, Store, decode_change_cursor, encode_change_cursor
from store.changes import (
    Change,
    ChangeFilter,
    ChangeKind,
    DataVersion,
    LogFollower,
    first_young_gap,
)
from store.mongo import MongoStore
from store.queries import Collection
from store.sqlite import SqliteStore

GENERAL = "code-interpreter-benchmark-general"
MATH = "code-interpreter-benchmark-math"


def another_process(store: Store, **options: Any) -> Store:
    """The same data opened again, as another process opens it: its own connection, its own
    view of the log."""
    if isinstance(store, SqliteStore):
        return SqliteStore(store.path.parent, **options)
    assert isinstance(store, MongoStore)
    return MongoStore(store.db, **options)


async def changed(store: Store, slug: str, **fields: Any) -> dict[str, Any]:
    [doc] = await store.benchmarks_by_slugs([slug])
    new = {**doc, **fields, "revision": doc["revision"] + 1, "updated_by": "tester"}
    assert await store.replace_at_revision(Collection.BENCHMARKS, slug, doc["revision"], new)
    return new


async def logged_since(store: Store, sequence: int) -> list[Change]:
    return await store.changes_after(sequence, 100)


async def take_a_number(store: MongoStore) -> int:
    """A change's number taken, as a MongoDB writer takes it, and its change not written yet
    (the writer between its write and its change, or dead)."""
    counter = await store.db.counters.find_one_and_update(
        {"_id": "changes"}, {"$inc": {"sequence": 1}}, return_document=ReturnDocument.AFTER
    )
    taken: int = counter["sequence"]
    return taken


async def write_late(store: MongoStore, taken: int) -> None:
    """The change numbered `taken` written at last (a copy of the next one's)."""
    later = await store.db.changes.find_one({"_id": taken + 1})
    await store.db.changes.insert_one({**later, "_id": taken})


async def test_each_write_logs_its_kind_document_author_and_subjects(store: Store) -> None:
    _, newest = await store.change_bounds()
    note = await changed(store, GENERAL, note="Checked again.")
    [[doc]] = [await store.benchmarks_by_slugs([MATH])]
    moved = {**doc["category"], "slug": "elsewhere", "name": "Elsewhere"}
    await changed(store, MATH, category=moved)

    first, second = await logged_since(store, newest)
    assert (first.sequence, second.sequence) == (newest + 1, newest + 2)
    assert first.kind is ChangeKind.BENCHMARK_UPDATED
    assert (first.collection, first.slug, first.revision, first.by) == (
        "benchmarks",
        GENERAL,
        note["revision"],
        "tester",
    )
    assert first.subjects == {f"benchmark:{GENERAL}"}  # nothing a catalog orders by moved
    assert first.at.endswith("Z")
    assert second.subjects == {
        f"benchmark:{MATH}",
        "catalog",
        "category:tool-use",
        "category:elsewhere",
        "family:code-interpreter-benchmark",
    }


async def test_a_read_recorded_and_a_model_created_are_named_so(store: Store) -> None:
    _, newest = await store.change_bounds()
    [doc] = await store.benchmarks_by_slugs([GENERAL])
    read = {**doc["history"][-1], "revision": doc["revision"] + 1, "read_on": "2026-11-20"}
    await changed(store, GENERAL, history=[*doc["history"], read])
    model = {
        "slug": "far-model",
        "name": "Far Model",
        "aliases": [],
        "lab": None,
        "released_on": None,
        "capability_index_rank": None,
        "revision": 1,
        "updated_by": "tester",
        "updated_at": "2026-11-20T00:00:00Z",
        "keys": ["far model"],
    }
    await store.insert(Collection.MODELS, model)

    recorded, created = await logged_since(store, newest)
    assert recorded.kind is ChangeKind.READ_RECORDED
    assert created.kind is ChangeKind.MODEL_CREATED
    assert created.subjects == {"model:far-model", "models"}


async def test_a_write_refused_logs_nothing(store: Store) -> None:
    _, newest = await store.change_bounds()
    [doc] = await store.benchmarks_by_slugs([GENERAL])
    stale = doc["revision"] - 1
    assert not await store.replace_at_revision(Collection.BENCHMARKS, GENERAL, stale, doc)
    assert await logged_since(store, newest) == []


async def wait_for(condition: Any, seconds: float = 20.0) -> None:
    """Until `condition()` holds (a generous deadline: the machine may be loaded)."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "not seen in time"
        await asyncio.sleep(0.05)


async def test_another_process_applies_exactly_what_a_write_changed(store: Store) -> None:
    follower = another_process(store)
    following = asyncio.create_task(follower.follow_changes())
    try:
        await wait_for(lambda: follower.version.current is not None)
        before = follower.version.current
        assert before is not None
        await changed(store, GENERAL, note="Checked again.")
        await wait_for(lambda: follower.version.current != before)
        assert not follower.version.unchanged_since(before, frozenset({f"benchmark:{GENERAL}"}))
        assert follower.version.unchanged_since(before, frozenset({f"benchmark:{MATH}"}))
        assert follower.version.resets == 0
    finally:
        following.cancel()
        await asyncio.gather(following, return_exceptions=True)
        if isinstance(follower, SqliteStore):
            await follower.close()


async def test_a_follower_behind_the_retention_retires_everything(store: Store) -> None:
    # (MongoDB's reads wait a while for a gap to be filled: this process does not.)
    follower = another_process(store, **({"gap_seconds": 0.0} if not store.embedded else {}))
    assert isinstance(follower, SqliteStore | MongoStore)
    follower.follower.start((await follower.change_bounds())[1])  # as it opens, now
    await changed(store, MATH, note="Checked again.")  # missed while it was away
    pruning = another_process(store, retention=timedelta(0))
    await changed(pruning, GENERAL, note="Checked again.")  # and every older change pruned
    oldest, newest = await store.change_bounds()
    assert oldest == newest

    following = asyncio.create_task(follower.follow_changes())
    try:
        await wait_for(lambda: follower.version.resets == 1)
        await wait_for(lambda: follower.follower.followed == newest)
    finally:
        following.cancel()
        await asyncio.gather(following, return_exceptions=True)
        for opened in (follower, pruning):
            if isinstance(opened, SqliteStore):
                await opened.close()


async def test_a_reader_on_mongodb_stops_before_a_number_taken_but_not_yet_written(
    store: Store,
) -> None:
    if not isinstance(store, MongoStore):
        pytest.skip("only MongoDB's writers take a number before they write their change")
    _, before = await store.change_bounds()
    taken = await take_a_number(store)
    await changed(store, GENERAL, note="Written after the number taken.")
    of_general = ChangeFilter(benchmarks=frozenset({GENERAL}))

    assert await logged_since(store, before) == []
    assert await store.changes_after(before, 10, of_general) == []
    assert await store.changes_after(before, 10, newest_first=True) == []
    # A reader for whom the gap is older than the grace takes its writer as dead, and passes.
    passing = another_process(store, gap_seconds=0.0)
    assert [change.sequence for change in await logged_since(passing, before)] == [taken + 1]

    await write_late(store, taken)
    assert [change.sequence for change in await logged_since(store, before)] == [taken, taken + 1]
    assert [change.sequence for change in await store.changes_after(before, 10, of_general)] == [
        taken,
        taken + 1,
    ]


async def test_from_now_on_mongodb_starts_before_a_number_taken_but_not_yet_written(
    store: Store,
) -> None:
    if not isinstance(store, MongoStore):
        pytest.skip("only MongoDB's writers take a number before they write their change")
    _, before = await store.change_bounds()
    taken = await take_a_number(store)
    await changed(store, GENERAL, note="Written after the number taken.")
    # The newest written is taken + 1, but "from now" there would never see `taken`.
    assert (await store.change_bounds())[1] == taken - 1 == before
    passing = another_process(store, gap_seconds=0.0)  # the gap taken as a dead writer's
    assert (await passing.change_bounds())[1] == taken + 1

    await write_late(store, taken)
    assert (await store.change_bounds())[1] == taken + 1
    taken_last = await take_a_number(store)  # in flight, with nothing after it
    assert (await store.change_bounds())[1] == taken_last - 1


def change(sequence: int, *subjects: str) -> Change:
    return Change(ChangeKind.BENCHMARK_UPDATED, frozenset(subjects), sequence=sequence)


def test_a_change_made_here_is_applied_once() -> None:
    version = DataVersion(known=True)
    follower = LogFollower(version)
    follower.local([change(1, "benchmark:a")])
    kept_at = version.current
    assert kept_at == 1
    follower.apply([change(1, "benchmark:a"), change(2, "benchmark:b")])
    assert version.current == 2  # the log's copy of the first change was not applied again
    assert version.unchanged_since(kept_at, frozenset({"benchmark:a"}))
    assert not version.unchanged_since(kept_at, frozenset({"benchmark:b"}))


def test_a_gap_the_follower_meets_is_taken_as_anything_changed() -> None:
    version = DataVersion(known=True)
    follower = LogFollower(version)
    follower.apply([change(1, "benchmark:a"), change(2, "benchmark:b")])
    assert (follower.followed, version.current, version.resets) == (2, 2, 0)
    follower.apply([change(4, "benchmark:d")])  # 3 pruned, or never written
    assert (follower.followed, version.resets) == (4, 1)
    assert not version.unchanged_since(2, frozenset({"benchmark:z"}))


@pytest.mark.parametrize(
    ("young", "written", "stop"),
    [
        ([], set(), None),  # nothing written lately: no gap can still be filled
        ([11, 12], set(), None),  # right after the reader's place
        ([12, 13], {11}, None),  # the number before, written a while ago
        ([12, 13], set(), 12),  # 11 taken, not written yet: stop before it
        ([11, 13], set(), 13),  # 12 taken, not written yet
        ([14], {12}, 14),  # 13 missing (12 is in the log, 13 is not)
    ],
)
def test_a_reader_stops_at_the_first_gap_that_may_still_be_filled(
    young: list[int], written: set[int], stop: int | None
) -> None:
    assert first_young_gap(10, young, written) == stop


def test_an_answer_that_read_everything_is_retired_by_any_change() -> None:
    version = DataVersion(known=True)
    version.bump({"benchmark:a"})
    assert version.unchanged_since(0, frozenset({"benchmark:b"}))
    assert not version.unchanged_since(0, frozenset({"*"}))
    version.known = False
    assert not version.unchanged_since(1, frozenset({"benchmark:b"}))


async def test_a_waiter_on_the_data_version_wakes_when_it_moves() -> None:
    version = DataVersion(known=True)
    seen = version.count
    waiter = asyncio.create_task(version.newer_than(seen, within=600))
    await asyncio.sleep(0)
    assert not waiter.done()  # nothing moved yet: it waits, without polling
    version.bump({"benchmark:x"})
    assert await asyncio.wait_for(waiter, 60)
    assert await asyncio.wait_for(version.newer_than(seen, within=600), 60)  # at once: moved
    assert not await version.newer_than(version.count, within=0)  # the backstop: not moved


def test_what_is_applied_through_runs_to_the_first_change_not_applied_here() -> None:
    version = DataVersion(known=True)
    follower = LogFollower(version)
    follower.start(5)
    assert version.applied_through == 5  # stored before this process kept anything
    follower.local([change(7, "benchmark:b")])  # made here; 6 is another process's, unread
    assert version.applied_through == 5
    follower.apply([change(6, "benchmark:a")])
    assert version.applied_through == 7  # 6 read from the log, 7 made here
    follower.apply([change(7, "benchmark:b"), change(8, "benchmark:c")])
    assert (version.applied_through, version.current) == (8, 3)


async def test_a_reader_waits_until_the_change_it_names_is_applied_here() -> None:
    version = DataVersion(known=True)
    follower = LogFollower(version)
    follower.start(1)
    waiter = asyncio.create_task(version.reached(3))
    follower.apply([change(2, "benchmark:a")])
    await asyncio.sleep(0)
    assert not waiter.done()  # 3 is not applied yet
    follower.local([change(3, "benchmark:b")])
    await asyncio.wait_for(waiter, 60)
    await asyncio.wait_for(version.reached(2), 60)  # at once: applied already


async def test_a_reader_wakes_when_the_follower_starts_past_its_change() -> None:
    """A worker that starts after the change a reader names applies it by starting past it,
    with no change counted: the reader is woken then, not at a backstop."""
    version = DataVersion(known=True)
    waiter = asyncio.create_task(version.reached(4))
    await asyncio.sleep(0)
    assert not waiter.done()
    LogFollower(version).start(4)
    await asyncio.wait_for(waiter, 60)
    assert version.count == 0  # nothing was bumped: the wake came from `applied_through`


def test_a_failing_watcher_leaves_the_change_counted_and_the_others_told() -> None:
    version = DataVersion(known=True)
    told: list[frozenset[str] | None] = []

    def failing(subjects: frozenset[str] | None) -> None:
        raise RuntimeError("a watcher's fault")

    version.watch(failing)
    version.watch(told.append)
    version.bump({"benchmark:a"})  # does not raise: the write that bumped it is made
    assert (version.count, told) == (1, [frozenset({"benchmark:a"})])
    version.unwatch(told.append)
    version.bump({"benchmark:b"})
    assert told == [frozenset({"benchmark:a"})]


async def test_a_reader_waiting_on_a_change_has_the_follower_read_the_log_at_once(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read-your-writes: a change another process made is applied here as soon as a reader
    asks for it (`change_applied`), not at the follower's next poll (an hour away here)."""
    monkeypatch.setattr("store.changes.POLL_SECONDS", 3600.0)
    follower = another_process(store)
    assert isinstance(follower, SqliteStore | MongoStore)
    await changed(store, MATH, note="Read first")
    _, first = await store.change_bounds()
    following = asyncio.create_task(follower.follow_changes())
    try:
        # Once it has read the log past the first change, it waits for its poll.
        await wait_for(lambda: follower.follower.followed >= first and follower.version.known)
        receipt = ChangeReceipt()
        doc = (await store.benchmarks_by_slugs([GENERAL]))[0]
        new = {**doc, "note": "Read back", "revision": doc["revision"] + 1}
        await store.replace_at_revision(
            Collection.BENCHMARKS, GENERAL, doc["revision"], new, receipt=receipt
        )
        assert receipt.newest == (await store.change_bounds())[1]  # noted in its transaction
        before = follower.version.current
        await asyncio.wait_for(follower.change_applied(receipt.newest), 60)
        assert follower.version.applied_through >= receipt.newest
        assert follower.version.current != before  # applied (its answers retired), not skipped
    finally:
        following.cancel()
        await asyncio.gather(following, return_exceptions=True)
        if isinstance(follower, SqliteStore):
            await follower.close()


def test_a_change_cursor_names_its_change_and_nothing_else_decodes() -> None:
    for sequence in (0, 1, 42, 10**18 - 1):
        assert decode_change_cursor(encode_change_cursor(sequence)) == sequence
    for junk in ("", "nope", "Y2hhbmdlOi0x", "Y2hhbmdlOjAx", encode_change_cursor(10**18)):
        assert decode_change_cursor(junk) is None, junk  # "change:-1", "change:01", too large
