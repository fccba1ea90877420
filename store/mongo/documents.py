"""Writes of the almanac's documents on MongoDB, each one atomic operation, its change logged
right after it."""

from typing import Any

from pymongo.errors import BulkWriteError, DuplicateKeyError

from store import subjects
from store.changes import ChangeDraft, ChangeKind, ChangeReceipt, document_change
from store.documents import LeadersDoc, TrackedRankDoc
from store.mongo.connection import WITHOUT_HISTORY, MongoConnection
from store.queries import AlreadyExists, Collection, Write
from store.subjects import SITE, benchmark_written, placements, ranks_moved, written


class DocumentWrites(MongoConnection):
    """The `Documents` role (store.interface)."""

    async def replace(
        self,
        collection: Collection,
        key: dict[str, Any],
        doc: Any,
        *,
        along: dict[str, dict[str, Any]] | None = None,
        receipt: ChangeReceipt | None = None,
    ) -> str:
        """Write `doc` in place of the document matching `key`, creating it if there is none:
        "created", "updated" or "unchanged". The site records `along` (by id) are written
        right after it (MongoDB without transactions: one after the other)."""
        outcome = await self._replace_site(collection, key, doc, receipt)
        for ident, record in (along or {}).items():
            await self._replace_site(collection, {"_id": ident}, record, receipt)
        return outcome

    async def _replace_site(
        self,
        collection: Collection,
        key: dict[str, Any],
        doc: Any,
        receipt: ChangeReceipt | None = None,
    ) -> str:
        result = await self.db[collection].replace_one(key, doc, upsert=True)
        if result.upserted_id is None and not result.modified_count:
            return "unchanged"
        created = result.upserted_id is not None
        await self._log([document_change("site", None if created else key, key, [SITE])], receipt)
        return "created" if created else "updated"

    async def insert_many(
        self,
        collection: Collection,
        docs: list[Any],
        *,
        by: str | None = None,
        receipt: ChangeReceipt | None = None,
    ) -> None:
        """Store new documents; `AlreadyExists` if a unique index already holds a key."""
        try:
            await self.db[collection].insert_many([dict(doc) for doc in docs])
        except BulkWriteError as error:
            raise AlreadyExists(_taken(error)) from error
        await self._log([_inserted(collection, doc, by) for doc in docs], receipt)

    async def insert(
        self,
        collection: Collection,
        doc: Any,
        *,
        by: str | None = None,
        receipt: ChangeReceipt | None = None,
    ) -> None:
        """Store a new document; `AlreadyExists` if a unique index already holds its key."""
        await self._log([await self._insert(collection, doc, by)], receipt)

    async def _insert(self, collection: Collection, doc: Any, by: str | None = None) -> ChangeDraft:
        try:
            await self.db[collection].insert_one(dict(doc))
        except DuplicateKeyError as error:
            raise AlreadyExists((error.details or {}).get("keyValue") or {}) from error
        return _inserted(collection, doc, by)

    async def replace_at_revision(
        self,
        collection: Collection,
        slug: str,
        revision: int,
        doc: Any,
        *,
        receipt: ChangeReceipt | None = None,
    ) -> bool:
        """Replace the document `slug` if it is still at `revision`; False if it moved on.

        The condition and the write are one atomic operation: of two writers that read the
        same revision, exactly one succeeds.
        """
        change = await self._replace(collection, slug, revision, doc)
        if change is None:
            return False
        await self._log([change], receipt)
        return True

    async def _replace(
        self, collection: Collection, slug: str, revision: int, doc: Any
    ) -> ChangeDraft | None:
        try:
            before = await self.db[collection].find_one_and_replace(
                {"slug": slug, "revision": revision}, doc, projection=WITHOUT_HISTORY
            )
        except DuplicateKeyError as error:
            raise AlreadyExists((error.details or {}).get("keyValue") or {}) from error
        if before is None:
            return None
        if collection == "benchmarks":
            subjects = benchmark_written(before, doc, placements(before))
        else:
            subjects = written(collection, before, doc)
        return document_change(collection, before, doc, subjects)

    async def write_batch(
        self, writes: list[Write], *, receipt: ChangeReceipt | None = None
    ) -> list[bool]:
        """Each write on its own (single-document writes need no transaction): False for one
        refused, because its key is taken or its document moved on."""
        done, changes = [], []
        try:
            for one in writes:
                try:
                    if one.revision is None:
                        change: ChangeDraft | None = await self._insert(one.collection, one.doc)
                    else:
                        slug = one.doc["slug"]
                        change = await self._replace(one.collection, slug, one.revision, one.doc)
                except AlreadyExists:
                    change = None
                done.append(change is not None)
                if change is not None:
                    changes.append(change)
        finally:  # what was written is logged, even when a later write fails
            await self._log(changes, receipt)
        return done

    async def set_tracked_ranks(
        self,
        ranks: dict[str, tuple[int, list[TrackedRankDoc]]],
        leaders: dict[str, LeadersDoc] | None = None,
        *,
        receipt: ChangeReceipt | None = None,
    ) -> list[str]:
        """Place tracked models anew on these benchmarks' leaderboards (derived data only), and
        with `leaders` (by slug) their leaders, each if it is still at the revision its
        placements were made from: the slugs that moved on (left as their writer placed
        them). An update each (mongomock cannot run pymongo's bulk `UpdateOne`)."""
        moved, touched = [], set()
        for slug, (revision, placed) in ranks.items():
            fields: dict[str, Any] = {"tracked_ranks": placed}
            if leaders is not None and slug in leaders:
                fields["leaders"] = leaders[slug]
            before = await self.db.benchmarks.find_one_and_update(
                {"slug": slug, "revision": revision},
                {"$set": fields},
                projection={"_id": 0, "tracked_ranks": 1, "leaders": 1},
            )
            if before is None:
                moved.append(slug)
                continue
            touched |= ranks_moved(placements(before), placements({"tracked_ranks": placed}))
            if "leaders" in fields and before.get("leaders") != fields["leaders"]:
                touched.add(subjects.leaders(slug))
        if touched:
            change = ChangeDraft(ChangeKind.PLACEMENTS_UPDATED, frozenset(touched))
            await self._log([change], receipt)
        return moved


def _taken(error: BulkWriteError) -> dict[str, Any]:
    errors = (error.details or {}).get("writeErrors") or [{}]
    taken: dict[str, Any] = errors[0].get("keyValue") or {}
    return taken


def _inserted(collection: Collection, doc: Any, by: str | None = None) -> ChangeDraft:
    subjects = (
        benchmark_written(None, doc, set())
        if collection == "benchmarks"
        else written(collection, None, doc)
    )
    return document_change(collection, None, doc if collection != "api_keys" else {}, subjects, by)
