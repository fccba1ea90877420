"""The change service: every write, from the API, the CLI or a bulk import, is made here.

A change loads what it builds on, checks it (editing.changes: the rules, revisions, history),
and writes the changed document at the revision it read, or refuses what moved on. Each is a
single document write, so it is atomic on any MongoDB (and the embedded store). A writer may
give the revision it expects; without one, a change that loses a race is made again on the new
revision, after a random pause that grows with each lost race (exponential backoff with full
jitter), until `RETRY_SECONDS` have passed. Where the change reads and writes is its workspace
(editing.workspace): the store itself, or an import's snapshot, written in batches or not at
all (a dry run).
"""

import asyncio
import itertools
import random
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from editing.changes import (
    Stamp,
    as_printed,
    changed_benchmark,
    changed_model,
    check_room_for_category,
    with_read,
    with_reads,
)
from editing.errors import Conflict, InvalidInput, NotFound
from editing.inputs import BenchmarkFields, CategoryFields, LabFields, ModelFields, ReadFields
from editing.workspace import LiveWorkspace, Workspace
from resolvers import TrackedModels, model_key, same_entries
from store import (
    PROVENANCE_ID,
    SITE_FIGURES_ID,
    AlreadyExists,
    BenchmarkDoc,
    CategoryDoc,
    ChangeReceipt,
    Collection,
    EntryDoc,
    LabDoc,
    ModelDoc,
    ReadDoc,
    Store,
)

Result = Literal["created", "updated", "unchanged"]

RETRY_SECONDS = 5.0
FIRST_PAUSE_SECONDS = 0.001
LONGEST_PAUSE_SECONDS = 0.1


@dataclass(frozen=True)
class RecordedRead:
    benchmark: BenchmarkDoc
    read: ReadDoc
    recorded: bool
    """False when the same read was already recorded (nothing was written)."""
    before: BenchmarkDoc
    """The benchmark as it was when the read was checked."""


class Editor:
    """Changes made by one writer (`by`: an API key's name, or the CLI's), in a workspace (the
    store itself unless given, the changes it writes noted in `receipt`, if given)."""

    def __init__(
        self,
        store: Store,
        by: str,
        clock: Callable[[], datetime] | None = None,
        workspace: Workspace | None = None,
        receipt: ChangeReceipt | None = None,
    ):
        self.workspace = workspace or LiveWorkspace(store, receipt)
        self.by = by
        self.clock = clock or (lambda: datetime.now(UTC))

    def stamp(self) -> Stamp:
        return Stamp(by=self.by, at=self.clock())

    async def create_benchmark(self, slug: str, fields: BenchmarkFields) -> BenchmarkDoc:
        catalog = await self.workspace.catalog()
        doc = changed_benchmark(None, slug, fields, catalog, self.stamp(), {})
        assert doc is not None
        await self._insert(Collection.BENCHMARKS, doc, "benchmark")
        return doc

    async def put_benchmark(
        self, slug: str, fields: BenchmarkFields, reads: list[ReadFields]
    ) -> tuple[BenchmarkDoc, Result]:
        """The benchmark created or updated with `fields`, and the `reads` not yet in its
        history appended, all in one write (what an import does for each benchmark)."""
        current: BenchmarkDoc | None = await self.workspace.load(Collection.BENCHMARKS, slug)
        if current is None and not fields.model_fields_set:
            raise InvalidInput.at(
                ("slug",), f"there is no benchmark {slug!r}; give its fields to create it"
            )

        async def change(held: BenchmarkDoc | None) -> BenchmarkDoc | None:
            stamp = self.stamp()
            named: list[Iterable[Any]] = [held["entries"] if held else []]
            named += [read.entries for read in reads]
            tracked = await self.workspace.tracked(itertools.chain.from_iterable(named))
            doc = held
            if fields.model_fields_set or held is None:
                catalog = await self.workspace.catalog()
                doc = changed_benchmark(held, slug, fields, catalog, stamp, tracked) or held
            assert doc is not None
            doc = with_reads(doc, reads, stamp, tracked) or doc
            return None if doc is held else doc

        if current is None:
            doc = await change(None)
            assert doc is not None
            await self._insert(Collection.BENCHMARKS, doc, "benchmark")
            return doc, "created"
        doc, written = await self._update(Collection.BENCHMARKS, slug, None, change)
        return doc, "updated" if written else "unchanged"

    async def update_benchmark(
        self, slug: str, fields: BenchmarkFields, expected_revision: int | None
    ) -> BenchmarkDoc:
        async def change(current: BenchmarkDoc) -> BenchmarkDoc | None:
            tracked = await self.workspace.tracked(current["entries"])
            catalog = await self.workspace.catalog()
            return changed_benchmark(current, slug, fields, catalog, self.stamp(), tracked)

        update = await self._update(Collection.BENCHMARKS, slug, expected_revision, change)
        doc: BenchmarkDoc = update[0]
        return doc

    async def record_read(
        self, slug: str, read: ReadFields, expected_revision: int | None
    ) -> RecordedRead:
        """Make `read` the benchmark's leaderboard and append it to its history.

        The same read recorded again changes nothing and returns the read already recorded,
        even with an expected revision that has since moved on (a retried request).
        """

        tracked: TrackedModels = {}
        before: BenchmarkDoc | None = None

        async def change(current: BenchmarkDoc) -> BenchmarkDoc | None:
            nonlocal tracked, before
            tracked, before = await self.workspace.tracked(read.entries), current
            return with_read(current, read, self.stamp(), tracked)

        doc, recorded = await self._update(
            Collection.BENCHMARKS, slug, expected_revision, change, no_op_first=True
        )
        history = doc.get("history", [])
        assert before is not None
        if recorded:
            return RecordedRead(benchmark=doc, read=history[-1], recorded=True, before=before)
        # Recorded before: the read of that day with these rows (as their source printed them).
        sent: list[EntryDoc] = [entry.model_dump(mode="json") for entry in read.entries]  # type: ignore[misc]
        same = [
            earlier
            for index, earlier in enumerate(history)
            if earlier["read_on"] == read.read_on
            and same_entries(
                earlier["entries"],
                as_printed(sent, history[index - 1]["entries"] if index else [], tracked),
            )
        ]
        return RecordedRead(benchmark=doc, read=same[-1], recorded=False, before=before)

    async def create_model(self, slug: str, fields: ModelFields) -> ModelDoc:
        labs, owners = await self._model_context(None, fields)
        doc = changed_model(None, slug, fields, labs, owners, self.stamp())
        assert doc is not None
        await self._insert(Collection.MODELS, doc, "model")
        await self.workspace.models_renamed(doc.get("keys", []))
        return doc

    async def update_model(
        self, slug: str, fields: ModelFields, expected_revision: int | None
    ) -> ModelDoc:
        return (await self._change_model(slug, fields, expected_revision))[0]

    async def put_model(self, slug: str, fields: ModelFields) -> tuple[ModelDoc, Result]:
        """The model created, or updated with `fields` (what an import does for each model)."""
        if await self.workspace.load(Collection.MODELS, slug) is None:
            return await self.create_model(slug, fields), "created"
        doc, written = await self._change_model(slug, fields, None)
        return doc, "updated" if written else "unchanged"

    async def _change_model(
        self, slug: str, fields: ModelFields, expected_revision: int | None
    ) -> tuple[ModelDoc, bool]:
        async def change(current: ModelDoc) -> ModelDoc | None:
            labs, owners = await self._model_context(current, fields)
            return changed_model(current, slug, fields, labs, owners, self.stamp())

        before: ModelDoc = await self._load(Collection.MODELS, slug)
        doc, written = await self._update(Collection.MODELS, slug, expected_revision, change)
        if written:
            await self.workspace.models_renamed([*before.get("keys", []), *doc.get("keys", [])])
        return doc, written

    async def create_lab(self, lab: LabFields) -> LabDoc:
        doc: LabDoc = {"slug": lab.slug, "name": lab.name}
        await self._insert(Collection.LABS, doc, "lab")
        return doc

    async def create_category(self, category: CategoryFields) -> CategoryDoc:
        known = await self.workspace.categories()
        if category.slug not in known:
            check_room_for_category(known)
        doc: CategoryDoc = {"slug": category.slug, "name": category.name}
        await self._insert(Collection.CATEGORIES, doc, "category")
        return doc

    async def put_lab_or_category(
        self, collection: Collection, entry: LabFields | CategoryFields
    ) -> Result:
        """The lab or category created if new (what an import does); renaming is refused."""
        held = await self.workspace.load(collection, entry.slug)
        if held is not None:
            if held["name"] != entry.name:
                raise InvalidInput.at(
                    ("name",),
                    f"{entry.slug!r} is stored as {held['name']!r}; renaming is not supported",
                )
            return "unchanged"
        if isinstance(entry, CategoryFields):
            await self.create_category(entry)
        else:
            await self.create_lab(entry)
        return "created"

    async def put_site_figures(self, figures: dict[str, Any]) -> str:
        """The site's figures, replaced: "created", "updated" or "unchanged"."""
        if await self.workspace.store.site_figures() == figures:
            return "unchanged"
        return await self.workspace.put_site(SITE_FIGURES_ID, figures)

    async def add_provenance(self, lines: list[str]) -> str:
        """Provenance lines not yet known, added after those that are."""
        known = await self.workspace.store.provenance()
        added = [line for line in lines if line not in known]
        if not added:
            return "unchanged"
        return await self.workspace.put_site(PROVENANCE_ID, {"lines": known + added})

    async def _model_context(
        self, current: ModelDoc | None, fields: ModelFields
    ) -> tuple[dict[str, LabDoc], dict[str, str]]:
        """Known labs, and which model owns each name and alias the change would give."""
        spellings = [
            *(current["aliases"] if current else []),
            *(fields.aliases or []),
            *([fields.name] if fields.name else []),
        ]
        owners = await self.workspace.owners([model_key(spelling) for spelling in spellings])
        return await self.workspace.known_labs(), owners

    async def _insert(self, collection: Collection, doc: Any, what: str) -> None:
        try:
            await self.workspace.insert(collection, doc, self.by)
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
        collection: Collection,
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
                written = await self.workspace.replace(collection, current, doc)
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

    async def _load(self, collection: Collection, slug: str) -> Any:
        found = await self.workspace.load(collection, slug)
        if found is None:
            raise NotFound(f"There is no {collection[:-1]} with slug {slug!r}.")
        return found


def _conflict(collection: Collection, slug: str, expected: int | None, current: int) -> Conflict:
    return Conflict(
        f"The {collection[:-1]} {slug!r} is at revision {current}, not the expected {expected}: "
        "someone changed it first. Read it again, then retry with its revision.",
        current_revision=current,
    )
