"""Reads of models, labs, categories and site records on MongoDB, and the cursors an export
reads through."""

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from store.documents import CategoryCountDoc, CategoryDoc, LabDoc, ModelDoc, SiteFiguresDoc
from store.mongo.connection import NO_ID, MongoConnection
from store.queries import EXPORTED, PROVENANCE_ID, SITE_FIGURES_ID, Collection, ItemCounts


class CatalogReads(MongoConnection):
    """The `Catalog` role (store.interface)."""

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
