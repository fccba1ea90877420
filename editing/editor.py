"""Making one change: load, check, write at the revision read, and refuse what moved on.

Every change is a single document write, so it is atomic on any MongoDB (and the embedded
store): it lands whole or not at all. A writer may give the revision it expects; without one,
a change that loses a race is made again on the new revision, after a random pause that grows
with each lost race (exponential backoff with full jitter), until `RETRY_SECONDS` have passed.
"""

import asyncio
import itertools
import random
import time
from collections.abc import Awaitable, Callable, Collection, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from editing.changes import (
    Catalog,
    Stamp,
    changed_benchmark,
    changed_model,
    check_room_for_category,
    with_read,
)
from editing.derived import tracked_ranks
from editing.errors import Conflict, InvalidInput, NotFound
from editing.inputs import BenchmarkFields, CategoryInput, LabInput, ModelFields, ReadInput
from resolvers.history import same_entries
from resolvers.tracking import TrackedModels, index_by_key, model_key
from store.documents import BenchmarkDoc, CategoryDoc, LabDoc, ModelDoc, ReadDoc
from store.queries import AlreadyExists, Store

RETRY_SECONDS = 5.0
FIRST_PAUSE_SECONDS = 0.001
LONGEST_PAUSE_SECONDS = 0.1


@dataclass(frozen=True)
class RecordedRead:
    benchmark: BenchmarkDoc
    read: ReadDoc
    recorded: bool
    """False when the same read was already recorded (nothing was written)."""


class Editor:
    """Changes made by one writer (`by`: an API key's name, or the CLI's)."""

    def __init__(self, store: Store, by: str, clock: Callable[[], datetime] | None = None):
        self.store = store
        self.by = by
        self.clock = clock or (lambda: datetime.now(UTC))

    def stamp(self) -> Stamp:
        return Stamp(by=self.by, at=self.clock())

    async def catalog(self) -> Catalog:
        return Catalog(
            labs={lab["slug"]: lab for lab in await self.store.labs()},
            categories={c["slug"]: c for c in await self.store.known_categories()},
            parents=await self.store.benchmark_parents(),
        )

    async def create_benchmark(self, slug: str, fields: BenchmarkFields) -> BenchmarkDoc:
        doc = changed_benchmark(None, slug, fields, await self.catalog(), self.stamp(), {})
        assert doc is not None
        await self._insert("benchmarks", doc, "benchmark")
        return doc

    async def update_benchmark(
        self, slug: str, fields: BenchmarkFields, expected_revision: int | None
    ) -> BenchmarkDoc:
        async def change(current: BenchmarkDoc) -> BenchmarkDoc | None:
            tracked = await self._tracked(current["entries"])
            catalog = await self.catalog()
            return changed_benchmark(current, slug, fields, catalog, self.stamp(), tracked)

        doc: BenchmarkDoc = (await self._update("benchmarks", slug, expected_revision, change))[0]
        return doc

    async def record_read(
        self, slug: str, read: ReadInput, expected_revision: int | None
    ) -> RecordedRead:
        """Make `read` the benchmark's leaderboard and append it to its history.

        The same read recorded again changes nothing and returns the read already recorded,
        even with an expected revision that has since moved on (a retried request).
        """

        async def change(current: BenchmarkDoc) -> BenchmarkDoc | None:
            tracked = await self._tracked(read.entries)
            return with_read(current, read, self.stamp(), tracked)

        doc, recorded = await self._update(
            "benchmarks", slug, expected_revision, change, no_op_first=True
        )
        entries = [entry.model_dump(mode="json") for entry in read.entries]
        same = [
            r
            for r in doc.get("history", [])
            if r["read_on"] == read.read_on and same_entries(r["entries"], entries)  # type: ignore[arg-type]
        ]
        return RecordedRead(benchmark=doc, read=same[-1], recorded=recorded)

    async def create_model(self, slug: str, fields: ModelFields) -> ModelDoc:
        labs, owners = await self._model_context(None, fields)
        doc = changed_model(None, slug, fields, labs, owners, self.stamp())
        assert doc is not None
        await self._insert("models", doc, "model")
        await rank_tracked_models(self.store, doc.get("keys", []))
        return doc

    async def update_model(
        self, slug: str, fields: ModelFields, expected_revision: int | None
    ) -> ModelDoc:
        async def change(current: ModelDoc) -> ModelDoc | None:
            labs, owners = await self._model_context(current, fields)
            return changed_model(current, slug, fields, labs, owners, self.stamp())

        before: ModelDoc = await self._load("models", slug)
        doc, written = await self._update("models", slug, expected_revision, change)
        if written:
            await rank_tracked_models(self.store, [*before.get("keys", []), *doc.get("keys", [])])
        return doc  # type: ignore[no-any-return]

    async def create_lab(self, lab: LabInput) -> LabDoc:
        doc: LabDoc = {"slug": lab.slug, "name": lab.name}
        await self._insert("labs", doc, "lab")
        return doc

    async def create_category(self, category: CategoryInput) -> CategoryDoc:
        known = await self.store.known_categories()
        if category.slug not in {held["slug"] for held in known}:
            check_room_for_category({held["slug"]: held for held in known})
        doc: CategoryDoc = {"slug": category.slug, "name": category.name}
        await self._insert("categories", doc, "category")
        return doc

    async def _tracked(self, entries: Iterable[Any]) -> TrackedModels:
        """The tracked models these leaderboard rows (documents or inputs) name."""
        keys = list({model_key(_model_name(entry)) for entry in entries})
        return index_by_key(await self.store.models_by_keys(keys)) if keys else {}

    async def _model_context(
        self, current: ModelDoc | None, fields: ModelFields
    ) -> tuple[dict[str, LabDoc], dict[str, str]]:
        """Known labs, and which model owns each name and alias the change would give."""
        spellings = [
            *(current["aliases"] if current else []),
            *(fields.aliases or []),
            *([fields.name] if fields.name else []),
        ]
        keys = [model_key(spelling) for spelling in spellings]
        owners = {
            key: model["slug"]
            for model in await self.store.models_by_keys(keys)
            for key in model.get("keys", [])
        }
        return {lab["slug"]: lab for lab in await self.store.labs()}, owners

    async def _insert(self, collection: str, doc: Any, what: str) -> None:
        try:
            await self.store.insert(collection, doc)
        except AlreadyExists as error:
            if "slug" in error.key:
                raise InvalidInput.at(
                    ("slug",), f"a {what} with slug {doc['slug']!r} already exists"
                ) from error
            # Another writer took a name or alias between our check and our write.
            raise Conflict(
                f"Another {what} took {error.key} meanwhile; read again and retry.",
                current_revision=None,
            ) from error

    async def _update(
        self,
        collection: str,
        slug: str,
        expected_revision: int | None,
        change: Callable[[Any], Awaitable[Any]],
        *,
        no_op_first: bool = False,
    ) -> tuple[Any, bool]:
        """Apply `change` to the stored document; (the document now, whether it was written)."""
        deadline = time.monotonic() + RETRY_SECONDS
        for lost_races in itertools.count():
            if lost_races:
                if time.monotonic() >= deadline:
                    break
                pause = min(LONGEST_PAUSE_SECONDS, FIRST_PAUSE_SECONDS * 2 ** min(lost_races, 16))
                await asyncio.sleep(random.uniform(0, pause))
            current = await self._load(collection, slug)
            moved_on = expected_revision is not None and current["revision"] != expected_revision
            if moved_on and not no_op_first:
                raise _conflict(collection, slug, expected_revision, current["revision"])
            doc = await change(current)
            if doc is None:
                return current, False
            if moved_on:
                raise _conflict(collection, slug, expected_revision, current["revision"])
            try:
                written = await self.store.replace_at_revision(
                    collection, slug, current["revision"], doc
                )
            except AlreadyExists as error:
                raise Conflict(
                    f"Another writer took {error.key} meanwhile; read again and retry.",
                    current_revision=current["revision"],
                ) from error
            if written:
                return doc, True
            if expected_revision is not None:
                latest = await self._load(collection, slug)
                raise _conflict(collection, slug, expected_revision, latest["revision"])
        raise Conflict(
            f"{slug!r} kept changing while this change was made; try again.",
            current_revision=None,
        )

    async def _load(self, collection: str, slug: str) -> Any:
        found = await self.store.documents_by_slugs(collection, [slug])
        if not found:
            raise NotFound(f"There is no {collection[:-1]} with slug {slug!r}.")
        return found[0]


async def rank_tracked_models(
    store: Store, keys: list[str], skip: Collection[str] = frozenset()
) -> None:
    """Place tracked models anew on every leaderboard that names one of `keys` (but those in
    `skip`), after a model's name or aliases changed: which rows are tracked, and so every
    rank, may have moved."""
    listing = await store.benchmarks_with_model_keys(list(set(keys)))
    benchmarks = [doc for doc in listing if doc["slug"] not in skip]
    if not benchmarks:
        return
    named = {entry["model_key"] for doc in benchmarks for entry in doc["entries"]}
    tracked = index_by_key(await store.models_by_keys(list(named)))
    await store.set_tracked_ranks(
        {
            doc["slug"]: tracked_ranks(doc["entries"], doc["metric"]["higher_is_better"], tracked)
            for doc in benchmarks
        }
    )


def _model_name(entry: Any) -> str:
    name: str = entry["model_name"] if isinstance(entry, dict) else entry.model_name
    return name


def _conflict(collection: str, slug: str, expected: int | None, current: int) -> Conflict:
    return Conflict(
        f"The {collection[:-1]} {slug!r} is at revision {current}, not the expected {expected}: "
        "someone changed it first. Read it again, then retry with its revision.",
        current_revision=current,
    )
