"""The change log on MongoDB: read by the feed, subscriptions, webhooks and this process's
follower, never past a number taken but not yet written while it may still be."""

from datetime import timedelta
from typing import Any

from pymongo import ASCENDING, DESCENDING
from pymongo.errors import PyMongoError

from store.changes import Change, ChangeFilter, ChangeKind, expired_before, first_young_gap
from store.mongo.connection import CHANGE_COUNTER, MongoConnection


class ChangeLogReads(MongoConnection):
    """The `ChangeLog` role (store.interface)."""

    async def follow_changes(self) -> None:
        """Apply the changes every process logs, as they log them, until cancelled. While the
        log cannot be read, nothing computed from the data is reused."""
        await self.follower.follow(self.changes_after, self.change_bounds, (PyMongoError,))

    async def change_applied(self, sequence: int) -> None:
        """Return once this process has applied every change up to `sequence`."""
        await self.follower.applied(sequence)

    async def changes_after(
        self,
        sequence: int,
        limit: int,
        where: ChangeFilter | None = None,
        *,
        newest_first: bool = False,
    ) -> list[Change]:
        """Up to `limit` changes of the log after `sequence` (those `where` matches), oldest
        first: the first `limit` of them, or the last (`newest_first`), newest first.

        Only changes before the first number taken but not yet written, unless that gap is
        older than `gap_seconds` (its writer taken as dead): a writer takes its number, then
        writes its change, so a reader that passed a young gap could skip that change for good.
        Every reader of the log (the feed, subscriptions, webhooks, the follower) reads here.
        Two round trips (the changes written within the grace, then the page), three when one
        of them follows a number that may be a gap."""
        bounds: dict[str, Any] = {"$gt": sequence}
        conditions: list[dict[str, Any]] = [{"_id": bounds}]
        if self.gap_seconds > 0:
            since = expired_before(timedelta(seconds=self.gap_seconds))
            young = await self._young_changes(sequence, since)
            if (gap := await self._first_young_gap(sequence, young)) is not None:
                bounds["$lt"] = gap
            # Not the changes written since `young` was read: one may follow a gap not seen.
            settled: list[dict[str, Any]] = [{"at": {"$lt": since}}]
            if young:
                settled.append({"_id": {"$lte": young[-1]}})
            conditions.append({"$or": settled})
        if where is not None:
            if where.kinds is not None:
                conditions.append({"kind": {"$in": sorted(where.kinds)}})
            if documents := where.documents():
                named = [
                    {"collection": collection, "slug": {"$in": sorted(slugs)}}
                    for collection, slugs in documents.items()
                ]
                conditions.append({"$or": named})
            if where.category is not None:
                conditions.append({"category": where.category})
        query = conditions[0] if len(conditions) == 1 else {"$and": conditions}
        cursor = self.db.changes.find(query).sort("_id", -1 if newest_first else 1).limit(limit)
        return [_change(doc) for doc in await cursor.to_list(None)]

    async def _young_changes(self, sequence: int, since: str) -> list[int]:
        """The numbers of the changes after `sequence` written at `since` or later, ascending
        (through the index by time: the last few seconds' changes)."""
        query = {"at": {"$gte": since}, "_id": {"$gt": sequence}}
        cursor = self.db.changes.find(query, {"_id": 1}).sort("_id", ASCENDING)
        return [doc["_id"] for doc in await cursor.to_list(None)]

    async def _first_young_gap(self, sequence: int, young: list[int]) -> int | None:
        """The first young change a gap precedes (store.changes.first_young_gap), the numbers
        before young changes looked up in the log."""
        before = {number - 1 for number in young} - set(young)
        before = {number for number in before if number > sequence}
        written: set[int] = set()
        if before:
            found = self.db.changes.find({"_id": {"$in": sorted(before)}}, {"_id": 1})
            written = {doc["_id"] for doc in await found.to_list(None)}
        return first_young_gap(sequence, young, written)

    async def change_bounds(self) -> tuple[int, int]:
        """The sequence numbers of the log's oldest change kept (the next one while none is)
        and of its newest (0 before the first): the newest that every number before it is
        written by, or was taken longer than `gap_seconds` ago. "From now" starts there, so it
        never starts past a change still being written (a number taken, its change not yet
        logged), which no reader after it would then see."""
        counter = await self.db.counters.find_one({"_id": CHANGE_COUNTER})
        newest = counter["sequence"] if counter else 0
        found = await self.db.changes.find_one({}, {"_id": 1}, sort=[("_id", ASCENDING)])
        oldest = None if found is None else int(found["_id"])
        if self.gap_seconds > 0:
            newest = await self._written_up_to(newest, oldest)
        return (newest + 1 if oldest is None else oldest, newest)

    async def _written_up_to(self, newest: int, oldest: int | None) -> int:
        """The number before the first one past the settled log that is not written yet, or
        `newest`. Settled: the changes written before the grace, and the numbers before the
        oldest change kept (pruned); with none kept, all but `newest`, which may be in flight.
        Starting a number early costs a reader nothing: that change is not in the log."""
        since = expired_before(timedelta(seconds=self.gap_seconds))
        settled = await self.db.changes.find_one(
            {"at": {"$lt": since}}, {"_id": 1}, sort=[("_id", DESCENDING)]
        )
        floor = max(0, newest - 1 if oldest is None else oldest - 1)
        if settled is not None:
            floor = max(floor, settled["_id"])
        young = set(await self._young_changes(floor, since))
        return next((n - 1 for n in range(floor + 1, newest + 1) if n not in young), newest)


def _change(doc: dict[str, Any]) -> Change:
    return Change(
        kind=ChangeKind(doc["kind"]),
        subjects=frozenset(doc["subjects"]),
        collection=doc["collection"],
        slug=doc["slug"],
        revision=doc["revision"],
        by=doc["by"],
        category=doc.get("category"),
        sequence=doc["_id"],
        at=doc["at"],
    )
