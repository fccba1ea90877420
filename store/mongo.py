"""The store on MongoDB (through motor): every read and write, one method per round trip."""

import asyncio
import contextlib
import logging
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

from pymongo import ASCENDING, DESCENDING, ReturnDocument
from pymongo.errors import BulkWriteError, DuplicateKeyError, PyMongoError

from store import subjects
from store.changes import (
    GAP_SECONDS,
    RETENTION,
    Change,
    ChangeDraft,
    ChangeFilter,
    ChangeKind,
    DataVersion,
    LogFollower,
    PruneClock,
    document_change,
    expired_before,
    first_young_gap,
    now_instant,
)
from store.documents import (
    ApiKeyDoc,
    BenchmarkDoc,
    BenchmarkSummaryDoc,
    BudgetDoc,
    CategoryCountDoc,
    CategoryDoc,
    DeliveryDoc,
    LabDoc,
    LeadersDoc,
    ModelDoc,
    SiteFiguresDoc,
    TrackedRankDoc,
    WebhookDoc,
)
from store.queries import (
    EXPORTED,
    ORDER_FIELDS,
    PROVENANCE_ID,
    SEED_ID,
    SITE_FIGURES_ID,
    SUMMARY_LEFT_OUT,
    AlreadyExists,
    BenchmarkFilter,
    Collection,
    ItemCounts,
    Neighbourhood,
    NeighbourhoodRequest,
    NoOnlineBackup,
    Order,
    SeedState,
    Write,
)
from store.subjects import (
    KEYS,
    SITE,
    benchmark_written,
    placements,
    ranks_moved,
    written,
)

log = logging.getLogger("almanac.store")

# The orders of a catalog (store.queries.ORDER_FIELDS), on fields the store keeps.
ORDERS: dict[str, list[tuple[str, int]]] = {
    order: [(field, ASCENDING) for field in fields] for order, fields in ORDER_FIELDS.items()
}
NO_ID = {"_id": 0}
CHANGE_COUNTER = "changes"  # the counters document that numbers the change log
WITHOUT_HISTORY = {"_id": 0, "history": 0}
# A catalog row's summary: the server sends no entry (store.queries.summary_of).
SUMMARY = {"_id": 0, **dict.fromkeys(SUMMARY_LEFT_OUT, 0)}


class MongoStore:
    """The almanac's collections. Each public coroutine is exactly one round trip."""

    embedded = False

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

    async def replace(
        self,
        collection: Collection,
        key: dict[str, Any],
        doc: Any,
        *,
        along: dict[str, dict[str, Any]] | None = None,
    ) -> str:
        """Write `doc` in place of the document matching `key`, creating it if there is none:
        "created", "updated" or "unchanged". The site records `along` (by id) are written
        right after it (MongoDB without transactions: one after the other)."""
        outcome = await self._replace_site(collection, key, doc)
        for ident, record in (along or {}).items():
            await self._replace_site(collection, {"_id": ident}, record)
        return outcome

    async def _replace_site(self, collection: Collection, key: dict[str, Any], doc: Any) -> str:
        result = await self.db[collection].replace_one(key, doc, upsert=True)
        if result.upserted_id is None and not result.modified_count:
            return "unchanged"
        created = result.upserted_id is not None
        await self._log([document_change("site", None if created else key, key, [SITE])])
        return "created" if created else "updated"

    async def insert_many(
        self, collection: Collection, docs: list[Any], *, by: str | None = None
    ) -> None:
        """Store new documents; `AlreadyExists` if a unique index already holds a key."""
        try:
            await self.db[collection].insert_many([dict(doc) for doc in docs])
        except BulkWriteError as error:
            raise AlreadyExists(_taken(error)) from error
        await self._log([_inserted(collection, doc, by) for doc in docs])

    async def insert(self, collection: Collection, doc: Any, *, by: str | None = None) -> None:
        """Store a new document; `AlreadyExists` if a unique index already holds its key."""
        await self._log([await self._insert(collection, doc, by)])

    async def _insert(self, collection: Collection, doc: Any, by: str | None = None) -> ChangeDraft:
        try:
            await self.db[collection].insert_one(dict(doc))
        except DuplicateKeyError as error:
            raise AlreadyExists((error.details or {}).get("keyValue") or {}) from error
        return _inserted(collection, doc, by)

    async def replace_at_revision(
        self, collection: Collection, slug: str, revision: int, doc: Any
    ) -> bool:
        """Replace the document `slug` if it is still at `revision`; False if it moved on.

        The condition and the write are one atomic operation: of two writers that read the
        same revision, exactly one succeeds.
        """
        change = await self._replace(collection, slug, revision, doc)
        if change is None:
            return False
        await self._log([change])
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

    async def write_batch(self, writes: list[Write]) -> list[bool]:
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
            await self._log(changes)
        return done

    async def _log(self, drafts: list[ChangeDraft]) -> None:
        """Append these changes to the log, right after the writes they describe (MongoDB
        without transactions cannot write both at once: a process that dies between them
        leaves a gap, which followers take as "anything may have changed")."""
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

    async def ping(self) -> None:
        await self.db.command("ping")

    async def documents_by_slugs(self, collection: Collection, slugs: list[str]) -> list[Any]:
        return await self._by_slugs(collection, slugs)

    async def benchmarks_by_slugs(self, slugs: list[str]) -> list[BenchmarkDoc]:
        return await self._by_slugs(Collection.BENCHMARKS, slugs)

    async def benchmark_with_neighbourhood(
        self, slug: str, siblings: int
    ) -> tuple[BenchmarkDoc, Neighbourhood] | None:
        """A benchmark, whole, with its neighbourhood and its first `siblings` siblings."""
        doc: BenchmarkDoc | None = await self.db.benchmarks.find_one({"slug": slug}, NO_ID)
        if doc is None:
            return None
        request = NeighbourhoodRequest(
            family=doc["family"],
            category=doc["category"]["slug"],
            siblings_limit=siblings,
        )
        return doc, (await self._neighbourhoods([request]))[0]

    async def neighbourhoods(self, requests: list[NeighbourhoodRequest]) -> list[Neighbourhood]:
        return await self._neighbourhoods(requests)

    async def _neighbourhoods(self, requests: list[NeighbourhoodRequest]) -> list[Neighbourhood]:
        """Families in one query, category sizes in another, then each slice of siblings: an
        indexed query each (a `$facet` would be one round trip, but could use no index)."""
        families = list({request.family for request in requests})
        categories = list({request.category for request in requests})
        members = await self.db.benchmarks.find({"family": {"$in": families}}, SUMMARY).to_list(
            None
        )
        sizes = {
            group["_id"]: group["count"]
            for group in await self.db.benchmarks.aggregate(
                [
                    {"$match": {"category.slug": {"$in": categories}}},
                    {"$group": {"_id": "$category.slug", "count": {"$sum": 1}}},
                ]
            ).to_list(None)
        }
        found = []
        for request in requests:
            family = [doc for doc in members if doc["family"] == request.family]
            in_category = sum(1 for doc in family if doc["category"]["slug"] == request.category)
            cursor = (
                self.db.benchmarks.find(
                    {"category.slug": request.category, "family": {"$ne": request.family}},
                    SUMMARY,
                )
                .sort(ORDERS["prominence"])
                .skip(request.siblings_offset)
                .limit(request.siblings_limit)
            )
            found.append(
                Neighbourhood(
                    request=request,
                    family=family,
                    category_count=sizes.get(request.category, 0),
                    siblings=await cursor.to_list(None) if request.siblings_limit else [],
                    sibling_count=sizes.get(request.category, 0) - in_category,
                )
            )
        return found

    async def benchmarks_without_leaders(self, after: str, limit: int) -> list[BenchmarkDoc]:
        query = {"slug": {"$gt": after}, "leaders": {"$exists": False}}
        cursor = self.db.benchmarks.find(query, WITHOUT_HISTORY).sort("slug").limit(limit)
        return list(await cursor.to_list(None))

    async def benchmarks_with_model_keys(self, keys: list[str]) -> list[BenchmarkDoc]:
        cursor = self.db.benchmarks.find({"entries.model_key": {"$in": keys}}, WITHOUT_HISTORY)
        return list(await cursor.to_list(None))

    async def leaderboard_size(self, slug: str) -> int | None:
        pipeline: list[dict[str, Any]] = [
            {"$match": {"slug": slug}},
            {"$project": {"_id": 0, "size": {"$size": {"$setUnion": ["$entries.model_key", []]}}}},
        ]
        found = await self.db.benchmarks.aggregate(pipeline).to_list(1)
        return int(found[0]["size"]) if found else None

    async def benchmark_page(
        self, where: BenchmarkFilter, order: Order, after: list[Any] | None, limit: int
    ) -> tuple[list[BenchmarkSummaryDoc], int]:
        """Up to `limit` benchmarks of the catalog in `order`, after the one whose order key is
        `after` (an index seek: keyset paging), as summaries, and how many match in all."""
        query = _filter_query(where)
        total = await self.db.benchmarks.count_documents(query)
        if limit == 0:  # MongoDB reads limit(0) as no limit at all
            return [], total
        if after is not None:
            query = {"$and": [query, _after(ORDER_FIELDS[order], after)]}
        cursor = self.db.benchmarks.find(query, SUMMARY).sort(ORDERS[order]).limit(limit)
        return await cursor.to_list(None), total

    async def model_results(
        self, model: str, offset: int, limit: int
    ) -> tuple[list[BenchmarkDoc], int]:
        """The benchmarks whose leaderboards list a tracked model, its best places first (then
        by name), a page of them, and how many there are."""
        listing = {"tracked_ranks.model": model}
        total = await self.db.benchmarks.count_documents(listing)
        if limit == 0:
            return [], total
        pipeline: list[dict[str, Any]] = [
            {"$match": listing},
            {"$project": WITHOUT_HISTORY},
            {"$unwind": "$tracked_ranks"},
            {"$match": listing},
            {"$sort": {"tracked_ranks.rank": 1, "name_key": 1, "slug": 1}},
            {"$skip": offset},
            {"$limit": limit},
        ]
        return await self.db.benchmarks.aggregate(pipeline).to_list(None), total

    async def set_tracked_ranks(
        self,
        ranks: dict[str, tuple[int, list[TrackedRankDoc]]],
        leaders: dict[str, LeadersDoc] | None = None,
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
            await self._log([ChangeDraft(ChangeKind.PLACEMENTS_UPDATED, frozenset(touched))])
        return moved

    async def benchmark_parents(self) -> dict[str, str | None]:
        """Every benchmark's parent (None for none), by slug."""
        cursor = self.db.benchmarks.find({}, {"_id": 0, "slug": 1, "parent": 1})
        return {doc["slug"]: doc["parent"] for doc in await cursor.to_list(None)}

    async def categories(self) -> list[CategoryCountDoc]:
        pipeline = [
            {
                "$group": {
                    "_id": "$category.slug",
                    "name": {"$first": "$category.name"},
                    "benchmark_count": {"$sum": 1},
                }
            },
            {"$sort": {"_id": 1}},
        ]
        groups = await self.db.benchmarks.aggregate(pipeline).to_list(None)
        return [
            {"slug": g["_id"], "name": g["name"], "benchmark_count": g["benchmark_count"]}
            for g in groups
        ]

    async def models_by_keys(self, keys: list[str]) -> list[ModelDoc]:
        return list(await self.db.models.find({"keys": {"$in": keys}}, NO_ID).to_list(None))

    async def models_by_slugs(self, slugs: list[str]) -> list[ModelDoc]:
        return await self._by_slugs(Collection.MODELS, slugs)

    async def models(self) -> list[ModelDoc]:
        """The whole curated list."""
        return list(await self.db.models.find({}, NO_ID).to_list(None))

    async def benchmarks(self) -> list[BenchmarkDoc]:
        """Every benchmark, whole (for export)."""
        return list(await self.db.benchmarks.find({}, NO_ID).sort("slug").to_list(None))

    async def item_counts(self) -> ItemCounts:
        """What an export holds, from each collection's metadata (no document is read): the
        four counts are sent at once, one round trip's wait. (`$unionWith` would count them in
        one command, but mongomock, which the tests run on, has no `$unionWith`.)"""
        counts = await asyncio.gather(
            *(self.db[collection].estimated_document_count() for collection in EXPORTED)
        )
        return ItemCounts(*counts)

    async def documents_in_batches(
        self, collection: Collection, size: int
    ) -> AsyncIterator[list[Any]]:
        """A cursor with a batch size per query (by the unique slug index): one getMore a
        batch."""
        if collection not in EXPORTED:
            raise ValueError(f"{collection!r} is not exported")
        queries: list[dict[str, Any]] = (
            [{"parent": None}, {"parent": {"$ne": None}}] if collection == "benchmarks" else [{}]
        )
        for query in queries:
            cursor = self.db[collection].find(query, NO_ID).sort("slug").batch_size(size)
            try:
                batch = []
                async for doc in cursor:
                    batch.append(doc)
                    if len(batch) == size:
                        yield batch
                        batch = []
                if batch:
                    yield batch
            finally:
                await cursor.close()

    async def _by_slugs(self, collection: Collection, slugs: list[str]) -> list[Any]:
        cursor = self.db[collection].find({"slug": {"$in": slugs}}, NO_ID)
        return list(await cursor.to_list(None))

    async def site_figures(self) -> SiteFiguresDoc:
        doc: SiteFiguresDoc | None = await self.db.site.find_one({"_id": SITE_FIGURES_ID}, NO_ID)
        return doc or {"launch_posts_read": 0, "labs_read": 0}

    async def provenance(self) -> list[str]:
        """Where the stored data comes from, one line per source."""
        doc = await self.db.site.find_one({"_id": PROVENANCE_ID})
        return list(doc["lines"]) if doc else []

    async def labs(self) -> list[LabDoc]:
        return list(await self.db.labs.find({}, NO_ID).sort("slug").to_list(None))

    async def known_categories(self) -> list[CategoryDoc]:
        """The categories a benchmark may be filed under, with or without benchmarks yet."""
        return list(await self.db.categories.find({}, NO_ID).sort("slug").to_list(None))

    async def api_key(self, key_id: str) -> ApiKeyDoc | None:
        doc: ApiKeyDoc | None = await self.db.api_keys.find_one({"key_id": key_id}, NO_ID)
        return doc

    async def api_keys(self) -> list[ApiKeyDoc]:
        return list(await self.db.api_keys.find({}, NO_ID).sort("created_at").to_list(None))

    async def revoke_api_key(self, name: str, at: str) -> bool:
        """Revoke the key called `name`; False if there is no such key still in force."""
        result = await self.db.api_keys.update_one(
            {"name": name, "revoked_at": None}, {"$set": {"revoked_at": at}}
        )
        if not result.modified_count:
            return False
        await self._log([document_change("api_keys", {}, {}, [KEYS])])
        return True

    async def set_api_key_budget(self, name: str, budget: BudgetDoc | None) -> bool:
        """Give the key called `name` its own budget, or the configured one again (None)."""
        change = {"$set": {"budget": budget}} if budget else {"$unset": {"budget": ""}}
        result = await self.db.api_keys.update_one({"name": name, "revoked_at": None}, change)
        if not result.matched_count:
            return False
        await self._log([document_change("api_keys", {}, {}, [KEYS])])
        return True

    async def is_empty(self) -> bool:
        """Whether the database holds nothing of the almanac's yet."""
        return not await self.db.list_collection_names()

    async def seed_state(self) -> SeedState:
        """How far the bundled dataset's seed got, by its marker (see editing.importer)."""
        marker = await self.db.site.find_one({"_id": SEED_ID})
        if marker is not None:
            return SeedState.FINISHED if marker["finished"] else SeedState.STARTED
        return SeedState.NEW if await self.is_empty() else SeedState.UNMARKED

    async def mark_seed(self, finished: bool) -> None:
        """Say that a seed began (False), or, written after its last write, that it finished."""
        await self.replace(Collection.SITE, {"_id": SEED_ID}, {"finished": finished})

    @asynccontextmanager
    async def seed_lock(self) -> AsyncIterator[None]:
        """Nothing to hold: a MongoDB database is seeded only on request (`almanac seed`)."""
        yield

    async def dump(self) -> dict[str, list[Any]]:
        """Every document of every collection, as stored (for checks that nothing changed)."""
        return {
            name: await self.db[name].find({}, NO_ID if name != "site" else None).to_list(None)
            for name in sorted(await self.db.list_collection_names())
            if name not in ("changes", "counters", "webhooks", "webhook_deliveries")
        }

    async def follow_changes(self) -> None:
        """Apply the changes every process logs, as they log them, until cancelled. While the
        log cannot be read, nothing computed from the data is reused."""
        await self.follower.follow(self.changes_after, self.change_bounds, (PyMongoError,))

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

    # Webhooks: one round trip each, logging no change (`_id` is the webhook's or event's id).

    async def insert_webhook(self, doc: WebhookDoc, most: int) -> bool:
        """The owner's count of webhooks is a counters document, taken by one conditional
        update before the insert (made, from the webhooks stored, the first time)."""
        owner, counter = doc["owner"], _webhook_counter(doc["owner"])
        stored = await self.db.webhooks.count_documents({"owner": owner})
        with contextlib.suppress(DuplicateKeyError):  # made meanwhile by another creation
            await self.db.counters.update_one(
                {"_id": counter}, {"$setOnInsert": {"count": stored}}, upsert=True
            )
        taken = await self.db.counters.update_one(
            {"_id": counter, "count": {"$lt": most}}, {"$inc": {"count": 1}}
        )
        if not taken.modified_count:
            return False
        try:
            await self.db.webhooks.insert_one({"_id": doc["id"], **doc})
        except BaseException:  # not made: its place is given back, or the key loses it for good
            await self.db.counters.update_one({"_id": counter}, {"$inc": {"count": -1}})
            raise
        return True

    async def webhook(self, webhook_id: str) -> WebhookDoc | None:
        doc: WebhookDoc | None = await self.db.webhooks.find_one({"_id": webhook_id}, NO_ID)
        return doc

    async def webhooks(self, owner: str | None = None) -> list[WebhookDoc]:
        query = {} if owner is None else {"owner": owner}
        cursor = self.db.webhooks.find(query, NO_ID).sort("created_at")
        return list(await cursor.to_list(None))

    async def update_webhook(
        self, webhook_id: str, fields: dict[str, Any], holder: str | None = None
    ) -> bool:
        query: dict[str, Any] = {"_id": webhook_id}
        if holder is not None:
            query["lease_holder"] = holder
        result = await self.db.webhooks.update_one(query, {"$set": fields})
        return bool(result.matched_count)

    async def delete_webhook(self, webhook_id: str) -> bool:
        doc = await self.db.webhooks.find_one_and_delete({"_id": webhook_id}, {"owner": 1})
        await self.db.webhook_deliveries.delete_many({"webhook": webhook_id})
        if doc is None:
            return False
        await self.db.counters.update_one(
            {"_id": _webhook_counter(doc["owner"])}, {"$inc": {"count": -1}}
        )
        return True

    async def take_webhook_lease(
        self, webhook_id: str, holder: str, now: float, until: float
    ) -> bool:
        result = await self.db.webhooks.update_one(
            {
                "_id": webhook_id,
                "enabled": True,
                "$or": [{"lease_holder": holder}, {"lease_until": {"$lt": now}}],
            },
            {"$set": {"lease_holder": holder, "lease_until": until}},
        )
        return bool(result.matched_count)

    async def save_delivery(self, doc: DeliveryDoc) -> None:
        await self.db.webhook_deliveries.replace_one(
            {"_id": doc["id"]}, {"_id": doc["id"], **doc}, upsert=True
        )

    async def delivery(self, delivery_id: str) -> DeliveryDoc | None:
        doc: DeliveryDoc | None = await self.db.webhook_deliveries.find_one(
            {"_id": delivery_id}, NO_ID
        )
        return doc

    async def deliveries(
        self, webhook_id: str, limit: int, status: str | None = None
    ) -> list[DeliveryDoc]:
        query: dict[str, Any] = {"webhook": webhook_id}
        if status is not None:
            query["status"] = status
        cursor = self.db.webhook_deliveries.find(query, NO_ID)
        return list(await cursor.sort([("created_at", -1), ("_id", -1)]).limit(limit).to_list(None))

    async def prune_deliveries(self, before: str) -> int:
        result = await self.db.webhook_deliveries.delete_many(
            {"status": {"$in": ["delivered", "failed"]}, "created_at": {"$lt": before}}
        )
        return int(result.deleted_count)

    async def backup(self, target: Path) -> None:
        raise NoOnlineBackup(
            "The almanac is on MongoDB: back it up with mongodump (docs/operations.md, Backups)."
        )

    async def close(self) -> None:
        self.db.client.close()


def _webhook_counter(owner: str) -> str:
    """The counters document holding how many webhooks the key called `owner` has."""
    return f"webhooks:{owner}"


def _filter_query(where: BenchmarkFilter) -> dict[str, Any]:
    query: dict[str, Any] = {}
    if where.category is not None:
        query["category.slug"] = where.category
    if where.status is not None:
        query["status"] = where.status
    if where.kind is not None:
        query["kind"] = where.kind
    if where.lab is not None:
        query["made_by.slug"] = where.lab
    if where.name_contains:
        query["name"] = {"$regex": re.escape(where.name_contains), "$options": "i"}
    return query


def _after(fields: tuple[str, ...], key: list[Any]) -> dict[str, Any]:
    """What comes after `key` in the order of `fields`: greater in the first field that
    differs, and equal in every field before it."""
    return {
        "$or": [
            {**dict(zip(fields[:i], key[:i], strict=True)), fields[i]: {"$gt": key[i]}}
            for i in range(len(fields))
        ]
    }


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
