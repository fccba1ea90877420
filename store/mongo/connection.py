"""The store's database on MongoDB (through motor): what every role of the store runs on, and
how a write's changes are appended to the log right after it."""

from datetime import timedelta
from pathlib import Path
from typing import Any

from pymongo import ASCENDING, ReturnDocument

from store.changes import (
    GAP_SECONDS,
    RETENTION,
    Change,
    ChangeDraft,
    ChangeReceipt,
    DataVersion,
    LogFollower,
    PruneClock,
    expired_before,
    now_instant,
)
from store.queries import ORDER_FIELDS, SUMMARY_LEFT_OUT, Collection, NoOnlineBackup

# The orders of a catalog (store.queries.ORDER_FIELDS), on fields the store keeps.
ORDERS: dict[str, list[tuple[str, int]]] = {
    order: [(field, ASCENDING) for field in fields] for order, fields in ORDER_FIELDS.items()
}

NO_ID = {"_id": 0}

CHANGE_COUNTER = "changes"  # the counters document that numbers the change log

WITHOUT_HISTORY = {"_id": 0, "history": 0}

# A catalog row's summary: the server sends no entry (store.queries.summary_of).
SUMMARY = {"_id": 0, **dict.fromkeys(SUMMARY_LEFT_OUT, 0)}


class MongoConnection:
    """A MongoDB database holding the almanac's collections."""

    def __init__(
        self, db: Any, *, retention: timedelta = RETENTION, gap_seconds: float = GAP_SECONDS
    ) -> None:
        self.db = db
        # Known only while the change log is followed (`follow_changes`).
        self.version = DataVersion(known=False)
        self.follower = LogFollower(self.version)
        self.retention = retention
        self.gap_seconds = gap_seconds
        self.pruning = PruneClock()

    async def _log(self, drafts: list[ChangeDraft], receipt: ChangeReceipt | None = None) -> None:
        """Append these changes to the log, right after the writes they describe (MongoDB
        without transactions cannot write both at once: a process that dies between them
        leaves a gap, which followers take as "anything may have changed"); noted in
        `receipt`, if given."""
        if not drafts:
            return
        counter = await self.db.counters.find_one_and_update(
            {"_id": CHANGE_COUNTER},
            {"$inc": {"sequence": len(drafts)}},
            upsert=True,
            return_document=ReturnDocument.AFTER,
        )
        first, at = counter["sequence"] - len(drafts) + 1, now_instant()
        logged = [
            Change(**vars(draft), sequence=sequence, at=at)
            for sequence, draft in enumerate(drafts, start=first)
        ]
        await self.db.changes.insert_many([_change_doc(change) for change in logged])
        if self.pruning.due():
            expired = {"at": {"$lt": expired_before(self.retention)}, "_id": {"$lt": first}}
            await self.db.changes.delete_many(expired)
        self.follower.local(logged)
        if receipt is not None:
            receipt.note(logged)

    async def _by_slugs(self, collection: Collection, slugs: list[str]) -> list[Any]:
        cursor = self.db[collection].find({"slug": {"$in": slugs}}, NO_ID)
        return list(await cursor.to_list(None))

    async def backup(self, target: Path) -> None:
        raise NoOnlineBackup(
            "The almanac is on MongoDB: back it up with mongodump (docs/operations.md, Backups)."
        )

    async def close(self) -> None:
        self.db.client.close()


def _change_doc(change: Change) -> dict[str, Any]:
    return {
        "_id": change.sequence,
        "at": change.at,
        "kind": change.kind.value,
        "collection": change.collection,
        "slug": change.slug,
        "revision": change.revision,
        "by": change.by,
        "category": change.category,
        "subjects": sorted(change.subjects),
    }
