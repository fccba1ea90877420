"""Every read the API makes, one method per database round trip."""

import re
from dataclasses import dataclass
from typing import Any

from store.changes import DataVersion
from store.documents import BenchmarkDoc, CategoryCountDoc, ModelDoc, SiteFiguresDoc

SITE_FIGURES_ID = "model_card_coverage"

# The fields a catalog listing sorts and filters on: everything but the embedded results.
SUMMARY_PROJECTION = {"_id": 0, "entries": 0, "model_card_reports": 0}
NO_ID = {"_id": 0}


@dataclass(frozen=True)
class BenchmarkFilter:
    category: str | None = None
    status: str | None = None
    kind: str | None = None
    lab: str | None = None
    name_contains: str | None = None

    def as_query(self) -> dict[str, Any]:
        query: dict[str, Any] = {}
        if self.category is not None:
            query["category.slug"] = self.category
        if self.status is not None:
            query["status"] = self.status
        if self.kind is not None:
            query["kind"] = self.kind
        if self.lab is not None:
            query["made_by.slug"] = self.lab
        if self.name_contains:
            query["name"] = {"$regex": re.escape(self.name_contains), "$options": "i"}
        return query


@dataclass(frozen=True)
class Neighbourhood:
    """The benchmarks shown around a benchmark: its family and its category's members."""

    family: list[BenchmarkDoc]
    category: list[BenchmarkDoc]


class Store:
    """The almanac's collections. Each public coroutine is exactly one round trip."""

    def __init__(self, db: Any, *, embedded: bool) -> None:
        self.db = db
        self.embedded = embedded
        self.version = DataVersion(known=embedded)

    async def replace(self, collection: str, key: dict[str, Any], doc: Any) -> str:
        """Write `doc` in place of the document matching `key`, creating it if there is none.

        Returns "created", "updated" or "unchanged".
        """
        result = await self.db[collection].replace_one(key, doc, upsert=True)
        if result.upserted_id is None and not result.modified_count:
            return "unchanged"
        self.version.bump()
        return "created" if result.upserted_id is not None else "updated"

    async def ping(self) -> None:
        await self.db.command("ping")

    async def benchmarks_by_slugs(self, slugs: list[str]) -> list[BenchmarkDoc]:
        cursor = self.db.benchmarks.find({"slug": {"$in": slugs}}, NO_ID)
        return list(await cursor.to_list(None))

    async def benchmark_with_neighbourhood(
        self, slug: str
    ) -> tuple[BenchmarkDoc, Neighbourhood] | None:
        """A benchmark with its family and category members, in one query."""
        pipeline = [
            {"$match": {"slug": slug}},
            {"$project": NO_ID},
            {"$lookup": _lookup("family", "family_members")},
            {"$lookup": _lookup("category.slug", "category_members")},
        ]
        found = await self.db.benchmarks.aggregate(pipeline).to_list(None)
        if not found:
            return None
        doc = found[0]
        family = [_without_id(member) for member in doc.pop("family_members")]
        category = [_without_id(member) for member in doc.pop("category_members")]
        return doc, Neighbourhood(family=family, category=category)

    async def benchmarks_in_families_or_categories(
        self, families: list[str], categories: list[str]
    ) -> list[BenchmarkDoc]:
        query = {"$or": [{"family": {"$in": families}}, {"category.slug": {"$in": categories}}]}
        return list(await self.db.benchmarks.find(query, NO_ID).to_list(None))

    async def benchmarks_with_model_keys(self, keys: list[str]) -> list[BenchmarkDoc]:
        cursor = self.db.benchmarks.find({"entries.model_key": {"$in": keys}}, NO_ID)
        return list(await cursor.to_list(None))

    async def benchmark_summaries(self, where: BenchmarkFilter) -> list[BenchmarkDoc]:
        """Every benchmark matching the filter, without its results (for sorting and paging)."""
        cursor = self.db.benchmarks.find(where.as_query(), SUMMARY_PROJECTION)
        return list(await cursor.to_list(None))

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
        return list(await self.db.models.find({"slug": {"$in": slugs}}, NO_ID).to_list(None))

    async def models(self) -> list[ModelDoc]:
        """The whole curated list."""
        return list(await self.db.models.find({}, NO_ID).to_list(None))

    async def site_figures(self) -> SiteFiguresDoc:
        doc: SiteFiguresDoc | None = await self.db.site.find_one({"_id": SITE_FIGURES_ID}, NO_ID)
        return doc or {"launch_posts_read": 0, "labs_read": 0}


def _lookup(field: str, into: str) -> dict[str, str]:
    return {"from": "benchmarks", "localField": field, "foreignField": field, "as": into}


def _without_id(doc: dict[str, Any]) -> Any:
    doc.pop("_id", None)
    return doc
