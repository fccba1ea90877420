"""Where a change reads what it builds on, and where it writes what it makes.

- `LiveWorkspace`, the write API's: the store itself. Each change is written at once, at the
  revision it read; a change that loses a race is made again (see editing.editor).
- `ImportWorkspace`, a bulk import's: a snapshot of what the import touches, taken once, which
  its changes build on one after another. Benchmark writes are gathered into transactions of
  `BATCH_SIZE`, each benchmark still whole or untouched, and each still at the revision read
  (one moved on meanwhile is reported, not overwritten). A dry run writes nothing at all.
"""

from collections.abc import Collection as Many
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from editing.changes import Catalog
from editing.derived import placed_anew
from resolvers import TrackedModels, index_by_key, model_key
from store import (
    PROVENANCE_ID,
    AlreadyExists,
    BenchmarkDoc,
    CategoryDoc,
    ChangeReceipt,
    Collection,
    LabDoc,
    ModelDoc,
    Store,
    Write,
)

BATCH_SIZE = 200


class Workspace(Protocol):
    store: Store

    async def catalog(self) -> Catalog: ...
    async def tracked(self, entries: Iterable[Any]) -> TrackedModels:
        """The tracked models these leaderboard rows (documents or inputs) name (at least)."""
        ...

    async def owners(self, keys: list[str]) -> dict[str, str]: ...
    async def known_labs(self) -> dict[str, LabDoc]: ...
    async def categories(self) -> dict[str, CategoryDoc]: ...
    async def load(self, collection: Collection, slug: str) -> Any | None: ...
    async def insert(self, collection: Collection, doc: Any, by: str) -> None: ...
    async def replace(self, collection: Collection, current: Any, doc: Any) -> bool: ...
    async def put_site(self, key: str, doc: dict[str, Any]) -> str: ...
    async def models_renamed(self, keys: list[str]) -> None: ...


class LiveWorkspace:
    """The store itself; the changes written noted in `receipt`, if given (what a mutation
    answers with: its change's cursor)."""

    def __init__(self, store: Store, receipt: ChangeReceipt | None = None) -> None:
        self.store = store
        self.receipt = receipt

    async def catalog(self) -> Catalog:
        return Catalog(
            labs=await self.known_labs(),
            categories=await self.categories(),
            parents=await self.store.benchmark_parents(),
        )

    async def tracked(self, entries: Iterable[Any]) -> TrackedModels:
        keys = list({model_key(_model_name(entry)) for entry in entries})
        return index_by_key(await self.store.models_by_keys(keys)) if keys else {}

    async def owners(self, keys: list[str]) -> dict[str, str]:
        return _owners(await self.store.models_by_keys(keys))

    async def known_labs(self) -> dict[str, LabDoc]:
        return {lab["slug"]: lab for lab in await self.store.labs()}

    async def categories(self) -> dict[str, CategoryDoc]:
        return {category["slug"]: category for category in await self.store.known_categories()}

    async def load(self, collection: Collection, slug: str) -> Any | None:
        found = await self.store.documents_by_slugs(collection, [slug])
        return found[0] if found else None

    async def insert(self, collection: Collection, doc: Any, by: str) -> None:
        await self.store.insert(collection, doc, by=by, receipt=self.receipt)

    async def replace(self, collection: Collection, current: Any, doc: Any) -> bool:
        return await self.store.replace_at_revision(
            collection, doc["slug"], current["revision"], doc, receipt=self.receipt
        )

    async def put_site(self, key: str, doc: dict[str, Any]) -> str:
        record = {"_id": key, **doc}
        return await self.store.replace(Collection.SITE, {"_id": key}, record, receipt=self.receipt)

    async def models_renamed(self, keys: list[str]) -> None:
        await rank_tracked_models(self.store, keys, receipt=self.receipt)


class DryRunWorkspace(LiveWorkspace):
    """The store as it is, and writes that go nowhere: a change is checked and made in full,
    refused as it would be, and not written (a mutation's `dryRun`)."""

    async def insert(self, collection: Collection, doc: Any, by: str) -> None:
        if await self.load(collection, doc["slug"]) is not None:
            raise AlreadyExists({"slug": doc["slug"]})

    async def replace(self, collection: Collection, current: Any, doc: Any) -> bool:
        return True

    async def put_site(self, key: str, doc: dict[str, Any]) -> str:
        return "updated"

    async def models_renamed(self, keys: list[str]) -> None:
        pass


@dataclass
class ImportWorkspace:
    """What an import has read and changed so far (also in a dry run)."""

    store: Store
    dry_run: bool
    labs: dict[str, LabDoc]
    known_categories: dict[str, CategoryDoc]
    models: dict[str, ModelDoc]
    benchmarks: dict[str, BenchmarkDoc]
    parents: dict[str, str | None]
    renamed: set[str] = field(default_factory=set)
    """The name and alias keys of every model created or changed."""
    pending: list[Write] = field(default_factory=list)
    tracked_models: TrackedModels | None = None  # the tracked models by key, until one changes
    seal: dict[str, dict[str, Any]] | None = None
    """Site records (by id) to write with the import's last write (see `put_site`, `sealed`)."""
    receipt: ChangeReceipt | None = None
    """Where the changes written are noted (an import through the API answers with them)."""

    @classmethod
    async def of(
        cls,
        store: Store,
        dry_run: bool,
        seal: dict[str, dict[str, Any]] | None = None,
        receipt: ChangeReceipt | None = None,
    ) -> "ImportWorkspace":
        """The store's catalog (labs, categories, parents) and models; benchmarks are fetched
        a batch at a time (`fetch`)."""
        catalog = await LiveWorkspace(store).catalog()
        return cls(
            store=store,
            dry_run=dry_run,
            labs=dict(catalog.labs),
            known_categories=dict(catalog.categories),
            models={model["slug"]: model for model in await store.models()},
            benchmarks={},
            parents=dict(catalog.parents),
            seal=seal,
            receipt=receipt,
        )

    async def fetch(self, slugs: list[Any]) -> None:
        """Read the stored benchmarks among `slugs` not held yet (one round trip)."""
        wanted = [slug for slug in set(slugs) if isinstance(slug, str)]
        missing = [slug for slug in wanted if slug not in self.benchmarks]
        if missing:
            for doc in await self.store.benchmarks_by_slugs(missing):
                self.benchmarks[doc["slug"]] = doc

    async def catalog(self) -> Catalog:
        return Catalog(labs=self.labs, categories=self.known_categories, parents=self.parents)

    async def tracked(self, entries: Iterable[Any]) -> TrackedModels:
        if self.tracked_models is None:
            self.tracked_models = index_by_key(self.models.values())
        return self.tracked_models

    async def owners(self, keys: list[str]) -> dict[str, str]:
        return _owners(self.models.values())

    async def known_labs(self) -> dict[str, LabDoc]:
        return self.labs

    async def categories(self) -> dict[str, CategoryDoc]:
        return self.known_categories

    async def load(self, collection: Collection, slug: str) -> Any | None:
        return self._held(collection).get(slug)

    async def insert(self, collection: Collection, doc: Any, by: str) -> None:
        await self._write(collection, None, doc, by)

    async def replace(self, collection: Collection, current: Any, doc: Any) -> bool:
        await self._write(collection, current, doc)
        return True

    async def put_site(self, key: str, doc: dict[str, Any]) -> str:
        if self.dry_run:
            return "updated"
        along = None
        if key == PROVENANCE_ID:  # the last of an import's site records: the seal goes with it
            along, self.seal = self.seal, None
        return await self.store.replace(
            Collection.SITE, {"_id": key}, {"_id": key, **doc}, along=along, receipt=self.receipt
        )

    async def sealed(self) -> None:
        """Write the seal now if no write took it (nothing changed at the end of the import)."""
        if self.seal and not self.dry_run:
            (ident, record), *rest = self.seal.items()
            await self.store.replace(
                Collection.SITE,
                {"_id": ident},
                record,
                along=dict(rest) or None,
                receipt=self.receipt,
            )
        self.seal = None

    async def models_renamed(self, keys: list[str]) -> None:
        self.renamed.update(keys)

    def forget_benchmarks(self) -> None:
        """Let the benchmarks of a batch written go: what the import holds does not grow with
        the file (a benchmark named again later is read again, as written)."""
        self.benchmarks.clear()

    async def flush(self) -> list[tuple[str, bool]]:
        """Write the gathered benchmarks: each one's slug, and whether it was written (False:
        another writer changed it since it was read)."""
        if not self.pending:
            return []
        written = await self.store.write_batch(self.pending, receipt=self.receipt)
        landed = [
            (write.doc["slug"], done) for write, done in zip(self.pending, written, strict=True)
        ]
        await self._placed_again(
            [w.doc for w, done in zip(self.pending, written, strict=True) if done]
        )
        self.pending.clear()
        return landed

    async def _placed_again(self, docs: list[BenchmarkDoc]) -> None:
        """The written benchmarks' tracked models placed again if the models their rows name
        changed since the snapshot (a model created or renamed by another writer meanwhile):
        that writer placed it only on the leaderboards stored before these writes landed. The
        snapshot takes the models as they are now, for the rest of the import."""
        named = list({entry["model_key"] for doc in docs for entry in doc["entries"]})
        if not named:
            return
        now = index_by_key(await self.store.models_by_keys(named))
        then = await self.tracked(())
        if all(_same_model(now.get(key), then.get(key)) for key in named):
            return
        for model in now.values():
            self.models[model["slug"]] = model
        self.tracked_models = None
        await self.store.set_tracked_ranks(*placed_anew(docs, now), receipt=self.receipt)

    async def _write(
        self, collection: Collection, current: Any, doc: Any, by: str | None = None
    ) -> None:
        """`doc` written in place of `current` (None: new), `by` its writer if new."""
        self._held(collection)[doc["slug"]] = doc
        if collection is Collection.MODELS:
            self.tracked_models = None
        if collection is Collection.BENCHMARKS:
            self.parents[doc["slug"]] = doc["parent"]
            if not self.dry_run:
                revision = None if current is None else current["revision"]
                self.pending.append(Write(collection, doc, revision))
        elif not self.dry_run:
            if current is None:
                await self.store.insert(collection, doc, by=by, receipt=self.receipt)
            elif not await self.store.replace_at_revision(
                collection, doc["slug"], current["revision"], doc, receipt=self.receipt
            ):
                raise MovedOn(doc["slug"])

    def _held(self, collection: Collection) -> dict[str, Any]:
        held: dict[Collection, dict[str, Any]] = {
            Collection.BENCHMARKS: self.benchmarks,
            Collection.MODELS: self.models,
            Collection.LABS: self.labs,
            Collection.CATEGORIES: self.known_categories,
        }
        return held[collection]


class MovedOn(Exception):
    """A document an import read was changed by another writer before the import wrote it."""

    def __init__(self, slug: str) -> None:
        super().__init__(slug)
        self.slug = slug


async def rank_tracked_models(
    store: Store,
    keys: list[str],
    skip: Many[str] = (),
    receipt: ChangeReceipt | None = None,
) -> None:
    """Place tracked models anew on every leaderboard that names one of `keys` (but those in
    `skip`), after a model's name or aliases changed: which rows are tracked, and so every
    rank and the leaders a catalog row shows, may have moved. Each placement is written only
    if its benchmark is still at the revision read; one written meanwhile is read and placed
    again (its writer may have placed the models as they were before this change)."""
    listing = await store.benchmarks_with_model_keys(list(set(keys)))
    while benchmarks := [doc for doc in listing if doc["slug"] not in skip]:
        moved = await _placed_anew(store, benchmarks, receipt)
        listing = await store.benchmarks_by_slugs(moved) if moved else []


async def place_missing_leaders(store: Store, batch: int = BATCH_SIZE) -> int:
    """Store the leaders of every benchmark written before leaders were kept (a data directory
    or a database from before summaries), a batch at a time, so that its catalog row and its
    place among a page's siblings are answered from its summary. One written meanwhile stored
    its own. How many were placed here."""
    after, placed = "", 0
    while benchmarks := await store.benchmarks_without_leaders(after, batch):
        placed += len(benchmarks) - len(await _placed_anew(store, benchmarks))
        after = benchmarks[-1]["slug"]
    return placed


async def _placed_anew(
    store: Store, benchmarks: list[BenchmarkDoc], receipt: ChangeReceipt | None = None
) -> list[str]:
    """Place the tracked models, and the leaders, of these benchmarks anew, each at the
    revision read: the slugs that moved on."""
    named = {entry["model_key"] for doc in benchmarks for entry in doc["entries"]}
    tracked = index_by_key(await store.models_by_keys(list(named)))
    return await store.set_tracked_ranks(*placed_anew(benchmarks, tracked), receipt=receipt)


def _same_model(now: ModelDoc | None, then: ModelDoc | None) -> bool:
    if now is None or then is None:
        return now is then
    return now["slug"] == then["slug"] and now["revision"] == then["revision"]


def _model_name(entry: Any) -> str:
    name: str = entry["model_name"] if isinstance(entry, dict) else entry.model_name
    return name


def _owners(models: Many[ModelDoc]) -> dict[str, str]:
    """Which model owns each name and alias key."""
    return {key: model["slug"] for model in models for key in model.get("keys", [])}
