"""Bulk import: every item of a dataset created, updated, left unchanged, or rejected with reasons.

Each benchmark's whole change (its fields and any new reads) is one document write, so an
import that stops part way leaves each benchmark either fully updated or untouched. Reads
already in a benchmark's history are recognised, so running the same import again finishes
the job without duplicates. A dry run checks and counts everything without writing.
"""

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import Any, Literal

from editing.changes import (
    Catalog,
    Stamp,
    changed_benchmark,
    changed_model,
    check_room_for_category,
    with_read,
)
from editing.dataset import CSV_LINES, Dataset
from editing.editor import rank_tracked_models
from editing.errors import EditError, InvalidInput, Location, Problem, dotted
from editing.inputs import (
    BenchmarkFields,
    CategoryInput,
    LabInput,
    ModelFields,
    ReadInput,
    check_slug,
    parse,
)
from resolvers.tracking import index_by_key
from store.documents import BenchmarkDoc, CategoryDoc, LabDoc, ModelDoc
from store.queries import PROVENANCE_ID, SITE_FIGURES_ID, AlreadyExists, Store, Write
from store.seed import load_bundled_dataset

Result = Literal["created", "updated", "unchanged", "rejected"]


@dataclass(frozen=True)
class Outcome:
    section: str
    key: str
    result: Result
    reason: str | None = None


@dataclass
class ImportSummary:
    outcomes: list[Outcome] = field(default_factory=list)

    def count(self, result: Result) -> int:
        return sum(1 for outcome in self.outcomes if outcome.result == result)

    def describe(self) -> str:
        """`11 benchmarks, 8 models, ...: 30 created, 0 updated, 0 unchanged, 0 rejected`."""
        sections: dict[str, int] = {}
        for outcome in self.outcomes:
            sections[outcome.section] = sections.get(outcome.section, 0) + 1
        items = ", ".join(f"{count} {section}" for section, count in sections.items())
        results = ", ".join(
            f"{self.count(result)} {result}"
            for result in ("created", "updated", "unchanged", "rejected")
        )
        return f"{items}: {results}"

    @property
    def rejected(self) -> list[Outcome]:
        return [outcome for outcome in self.outcomes if outcome.result == "rejected"]


@dataclass
class _State:
    """What the store holds, as the import has changed it so far (also in a dry run)."""

    labs: dict[str, LabDoc]
    categories: dict[str, CategoryDoc]
    models: dict[str, ModelDoc]
    benchmarks: dict[str, BenchmarkDoc]
    parents: dict[str, str | None]

    def catalog(self) -> Catalog:
        return Catalog(labs=self.labs, categories=self.categories, parents=self.parents)

    def owners(self) -> dict[str, str]:
        return {key: m["slug"] for m in self.models.values() for key in m.get("keys", [])}


def item_count(dataset: Dataset) -> int:
    sections = ("labs", "categories", "models", "benchmarks")
    return sum(len(dataset.get(section, [])) for section in sections) + 1


async def import_dataset(
    store: Store,
    dataset: Dataset,
    stamp: Stamp,
    *,
    dry_run: bool = False,
    advance: Callable[[], None] = lambda: None,
) -> ImportSummary:
    """Import `dataset` item by item; `advance` is called after each (for a progress bar)."""
    summary = ImportSummary()
    state = await _load_state(store, dataset)
    stored_before = set(state.parents)  # the benchmarks there were before this import
    write = not dry_run

    async def registry(section: str, known: dict[str, Any], item: Any) -> None:
        model: type[LabInput] | type[CategoryInput] = (
            LabInput if section == "labs" else CategoryInput
        )
        entry = parse(model, item, today=_day(stamp))
        held = known.get(entry.slug)
        if held is not None and held["name"] != entry.name:
            raise InvalidInput.at(
                ("name",),
                f"{entry.slug!r} is stored as {held['name']!r}; renaming is not supported",
            )
        if held is None:
            if section == "categories":
                check_room_for_category(known)
            known[entry.slug] = {"slug": entry.slug, "name": entry.name}
            if write:
                await store.insert(section, known[entry.slug])
            summary.outcomes.append(Outcome(section, entry.slug, "created"))
        else:
            summary.outcomes.append(Outcome(section, entry.slug, "unchanged"))

    for section, known in (("labs", state.labs), ("categories", state.categories)):
        for index, item in enumerate(dataset.get(section, [])):
            await _each(summary, section, index, item, partial(registry, section, known))
            advance()

    async def model(item: Any) -> None:
        slug, fields = _split(item, ModelFields, stamp)
        current = state.models.get(slug)
        doc = changed_model(current, slug, fields, state.labs, state.owners(), stamp)
        await _write(store, "models", current, doc, summary, write, slug)
        if doc is not None:
            renamed.update(doc.get("keys", []))
            if current is not None:
                renamed.update(current.get("keys", []))
        state.models[slug] = doc or current  # type: ignore[assignment]

    renamed: set[str] = set()  # the name and alias keys of every model created or changed
    for index, item in enumerate(dataset.get("models", [])):
        await _each(summary, "models", index, item, model)
        advance()
    tracked = index_by_key(state.models.values())

    async def benchmark(item: Any) -> None:
        item = dict(item)
        raw_reads = item.pop("reads", [])
        if not isinstance(raw_reads, list):
            raise InvalidInput.at(("reads",), "expected a list of reads")
        slug, fields = _split(item, BenchmarkFields, stamp)
        current = state.benchmarks.get(slug)
        doc = current
        if current is None and not fields.model_fields_set:
            raise InvalidInput.at(
                ("slug",), f"there is no benchmark {slug!r}; give its fields to create it"
            )
        if fields.model_fields_set or current is None:
            catalog = state.catalog()
            doc = changed_benchmark(current, slug, fields, catalog, stamp, tracked) or current
        assert doc is not None
        for position, raw_read in enumerate(raw_reads):
            if isinstance(raw_read, dict):
                raw_read = dict(raw_read)
            lines = raw_read.pop(CSV_LINES, None) if isinstance(raw_read, dict) else None
            try:
                read = parse(ReadInput, raw_read, today=_day(stamp))
                doc = with_read(doc, read, stamp, tracked) or doc
            except InvalidInput as error:
                raise _located(error, ("reads", position), lines) from error
        await batch.add("benchmarks", slug, current, doc)
        # Kept for a later item of the same benchmark only: thousands of whole documents held
        # to the end would make every garbage collection longer as the import goes on.
        occurrences[slug] -= 1
        if occurrences[slug]:
            state.benchmarks[slug] = doc
        else:
            state.benchmarks.pop(slug, None)
        state.parents[slug] = doc["parent"]

    batch = _Batch(store, summary, write)
    occurrences = Counter(
        item.get("slug") for item in dataset.get("benchmarks", []) if isinstance(item, dict)
    )

    tracks_last = sorted(
        enumerate(dataset.get("benchmarks", [])),
        key=lambda pair: isinstance(pair[1], dict) and pair[1].get("parent") is not None,
    )
    for index, item in tracks_last:
        await _each(summary, "benchmarks", index, item, benchmark)
        advance()
    await batch.flush()

    await _each(summary, "site", 0, dataset, lambda data: _site(store, data, summary, write))
    # Benchmarks written by this import placed the models already; those it left alone may
    # name a model it created or changed.
    imported = {slug for slug in occurrences if isinstance(slug, str)}
    if renamed and write and stored_before - imported:
        await rank_tracked_models(store, list(renamed), skip=imported)
    advance()
    return summary


async def _load_state(store: Store, dataset: Dataset) -> _State:
    slugs = [
        item["slug"]
        for item in dataset.get("benchmarks", [])
        if isinstance(item, dict) and isinstance(item.get("slug"), str)
    ]
    return _State(
        labs={lab["slug"]: lab for lab in await store.labs()},
        categories={c["slug"]: c for c in await store.known_categories()},
        models={model["slug"]: model for model in await store.models()},
        benchmarks={doc["slug"]: doc for doc in await store.benchmarks_by_slugs(slugs)},
        parents=await store.benchmark_parents(),
    )


async def _each(
    summary: ImportSummary, section: str, index: int, item: Any, apply: Callable[[Any], Any]
) -> None:
    """Apply one item, turning a refusal into a rejected outcome with its reasons."""
    key = item.get("slug") if isinstance(item, dict) and section != "site" else None
    try:
        if not isinstance(item, dict):
            raise InvalidInput.at((), "expected an object")
        await apply(item)
    except EditError as error:
        summary.outcomes.append(
            Outcome(section, str(key or f"{section}[{index}]"), "rejected", _reason(error))
        )


def _split(item: dict[str, Any], fields_model: type[Any], stamp: Stamp) -> tuple[str, Any]:
    rest = dict(item)
    slug = rest.pop("slug", None)
    if not isinstance(slug, str):
        raise InvalidInput.at(("slug",), "is required")
    return check_slug(slug), parse(fields_model, rest, today=_day(stamp))


@dataclass
class _Batch:
    """Benchmark writes gathered into transactions of `BATCH_SIZE`: each benchmark is still
    whole or untouched, and the indexes each one touches are written once a batch, not once a
    benchmark (which made an import slower, per benchmark, the larger the almanac)."""

    store: Store
    summary: ImportSummary
    write: bool
    pending: list[tuple[Write, Outcome]] = field(default_factory=list)

    async def add(self, collection: str, slug: str, current: Any, doc: Any) -> None:
        if doc is None or doc is current:
            self.summary.outcomes.append(Outcome(collection, slug, "unchanged"))
            return
        outcome = Outcome(collection, slug, "created" if current is None else "updated")
        if not self.write:
            self.summary.outcomes.append(outcome)
            return
        revision = None if current is None else current["revision"]
        self.pending.append((Write(collection, doc, revision), outcome))
        if len(self.pending) >= BATCH_SIZE:
            await self.flush()

    async def flush(self) -> None:
        if not self.pending:
            return
        written = await self.store.write_batch([one for one, _ in self.pending])
        for (_, outcome), done in zip(self.pending, written, strict=True):
            refused = Outcome(
                outcome.section, outcome.key, "rejected", _reason(_moved_on(outcome.key))
            )
            self.summary.outcomes.append(outcome if done else refused)
        self.pending.clear()


async def _write(
    store: Store,
    collection: str,
    current: Any,
    doc: Any,
    summary: ImportSummary,
    write: bool,
    slug: str,
) -> None:
    if doc is None or doc is current:
        summary.outcomes.append(Outcome(collection, slug, "unchanged"))
        return
    if write:
        try:
            if current is None:
                await store.insert(collection, doc)
            elif not await store.replace_at_revision(collection, slug, current["revision"], doc):
                raise _moved_on(slug)
        except AlreadyExists as error:
            raise _moved_on(slug) from error
    summary.outcomes.append(Outcome(collection, slug, "created" if current is None else "updated"))


async def _site(store: Store, data: Dataset, summary: ImportSummary, write: bool) -> None:
    """The site figures and provenance lines (merged: lines already known are kept)."""
    if "site" in data:
        site = data["site"]
        fields = ("launch_posts_read", "labs_read")
        if not isinstance(site, dict) or set(site) != set(fields):
            raise InvalidInput.at(("site",), f"expected exactly {', '.join(fields)}")
        problems = [
            Problem(("site", name), "expected a whole number, 0 or more")
            for name in fields
            if not _count(site[name])
        ]
        if problems:
            raise InvalidInput(problems)
        unchanged = await store.site_figures() == site
        await _keep(store, summary, write, SITE_FIGURES_ID, site, unchanged)
    lines = data.get("provenance", [])
    if lines:
        if not all(isinstance(line, str) for line in lines):
            raise InvalidInput.at(("provenance",), "expected a list of strings")
        known = await store.provenance()
        added = [line for line in lines if line not in known]
        await _keep(store, summary, write, PROVENANCE_ID, {"lines": known + added}, not added)


async def _keep(
    store: Store, summary: ImportSummary, write: bool, key: str, doc: Any, unchanged: bool
) -> None:
    if unchanged:
        summary.outcomes.append(Outcome("site", key, "unchanged"))
        return
    result = "updated"
    if write:
        result = await store.replace("site", {"_id": key}, {"_id": key, **doc})
    summary.outcomes.append(Outcome("site", key, result))  # type: ignore[arg-type]


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _moved_on(slug: str) -> InvalidInput:
    return InvalidInput.at(
        ("slug",), f"{slug!r} was changed by another writer during the import; run it again"
    )


def _located(error: InvalidInput, prefix: Location, lines: list[int] | None) -> InvalidInput:
    """The problems inside a read, named by CSV line where the read came from a CSV file."""
    if lines is None:
        return error.within(prefix)
    problems = []
    for problem in error.problems:
        where = problem.location
        if len(where) >= 2 and where[0] == "entries" and isinstance(where[1], int):
            where = ("line", lines[where[1]], *where[2:])
        problems.append(Problem(where, problem.message))
    return InvalidInput(problems)


def _reason(error: EditError) -> str:
    if isinstance(error, InvalidInput):
        return "; ".join(f"{dotted(p.location) or 'item'}: {p.message}" for p in error.problems)
    return str(error)


def _day(stamp: Stamp) -> Any:
    return stamp.at.date()


BUNDLED_DATASET_WRITER = "bundled dataset"
BATCH_SIZE = 200


async def seed(store: Store) -> ImportSummary:
    """Import the bundled dataset: running it again changes nothing."""
    stamp = Stamp(by=BUNDLED_DATASET_WRITER, at=datetime.now(UTC))
    return await import_dataset(store, load_bundled_dataset(), stamp)
