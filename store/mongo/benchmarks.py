"""Reads of benchmarks on MongoDB: pages, neighbourhoods, leaderboards."""

import re
from typing import Any

from store.documents import BenchmarkDoc, BenchmarkSummaryDoc
from store.mongo.connection import NO_ID, ORDERS, SUMMARY, WITHOUT_HISTORY, MongoConnection
from store.queries import (
    ORDER_FIELDS,
    BenchmarkFilter,
    Collection,
    Neighbourhood,
    NeighbourhoodRequest,
    Order,
)


class BenchmarkReads(MongoConnection):
    """The `Benchmarks` role (store.interface)."""

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

    async def benchmark_parents(self) -> dict[str, str | None]:
        """Every benchmark's parent (None for none), by slug."""
        cursor = self.db.benchmarks.find({}, {"_id": 0, "slug": 1, "parent": 1})
        return {doc["slug"]: doc["parent"] for doc in await cursor.to_list(None)}

    async def benchmarks(self) -> list[BenchmarkDoc]:
        """Every benchmark, whole (for export)."""
        return list(await self.db.benchmarks.find({}, NO_ID).sort("slug").to_list(None))


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
