"""Bulk import: every item of a dataset created, updated, left unchanged, or rejected with reasons.

Every item goes through the change service (editing.editor) as a write from the API would,
in an import's workspace (editing.workspace): the changes build on one another, benchmark writes
are gathered into transactions, and a dry run writes nothing. Each benchmark's whole change (its
fields and any new reads) is one document write, so an import that stops part way leaves each
benchmark either fully updated or untouched. Reads already in a benchmark's history are
recognised, so running the same import again finishes the job without duplicates.
"""

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from itertools import chain, islice
from typing import Any, Literal

from editing.changes import Stamp, row_problems
from editing.counts import counted_items
from editing.dataset import CSV_LINES, Dataset, Item, Source, as_source
from editing.editor import Editor
from editing.errors import EditError, InvalidInput, Problem, dotted
from editing.inputs import (
    BenchmarkFields,
    CategoryFields,
    LabFields,
    ModelFields,
    ReadFields,
    check_slug,
    parse,
)
from editing.workspace import BATCH_SIZE, ImportWorkspace, MovedOn, rank_tracked_models
from resolvers import Row, TrackedModels, leader, leaderboard, read_changes, tracked_leader
from store import (
    PROVENANCE_ID,
    SEED_ID,
    SITE_FIGURES_ID,
    BenchmarkDoc,
    ChangeReceipt,
    Collection,
    SeedState,
    Store,
    load_bundled_dataset,
)

Result = Literal["created", "updated", "unchanged", "rejected"]


@dataclass(frozen=True)
class Outcome:
    section: str
    key: str
    result: Result
    reason: str | None = None
    changes: str | None = None
    """What a benchmark's new reads change: rows, and leaders before and after."""


@dataclass
class ImportSummary:
    outcomes: list[Outcome] = field(default_factory=list)

    def count(self, result: Result) -> int:
        return sum(1 for outcome in self.outcomes if outcome.result == result)

    def describe(self) -> str:
        """`11 benchmarks, 1 category, ...: 30 created, 0 updated, 0 unchanged, 0 rejected`."""
        sections: dict[str, int] = {}
        for outcome in self.outcomes:
            sections[outcome.section] = sections.get(outcome.section, 0) + 1
        items = ", ".join(counted_items(count, section) for section, count in sections.items())
        results = ", ".join(
            f"{self.count(result)} {result}"
            for result in ("created", "updated", "unchanged", "rejected")
        )
        return f"{items}: {results}"

    @property
    def rejected(self) -> list[Outcome]:
        return [outcome for outcome in self.outcomes if outcome.result == "rejected"]


def item_count(dataset: Dataset | Source) -> int:
    """The steps an import takes: one an item, and one for the site figures and provenance."""
    return as_source(dataset).count() + 1


async def import_dataset(
    store: Store,
    dataset: Dataset | Source,
    stamp: Stamp,
    *,
    dry_run: bool = False,
    allow_removals: bool = False,
    advance: Callable[[], None] = lambda: None,
    seal: dict[str, dict[str, Any]] | None = None,
    receipt: ChangeReceipt | None = None,
) -> ImportSummary:
    """Import `dataset` item by item; `advance` is called after each (for a progress bar).

    Benchmarks are taken `BATCH_SIZE` at a time (parents first, then tracks), each batch's
    stored documents read in one go and written in one transaction, then let go: what the
    import holds does not grow with the file. With `allow_removals`, every read may leave out
    rows of the current leaderboard. The site records `seal` (by id) are written in the same
    transaction as the import's last site record (its provenance), or last, on their own.
    The changes written are noted in `receipt`, if given.
    """
    source = as_source(dataset)
    workspace = await ImportWorkspace.of(store, dry_run, seal, receipt)
    run = _Import(store, workspace, stamp, dry_run, allow_removals, advance)
    await run.registries(source)
    await run.models(source)
    await run.benchmarks(source)
    await run.finish(source)
    return run.summary


class _Import:
    """One import as it runs: its workspace and editor, the outcomes so far, and the benchmark
    writes waiting for their batch's transaction."""

    def __init__(
        self,
        store: Store,
        workspace: ImportWorkspace,
        stamp: Stamp,
        dry_run: bool,
        allow_removals: bool,
        advance: Callable[[], None],
    ) -> None:
        self.store, self.workspace, self.stamp = store, workspace, stamp
        self.dry_run, self.allow_removals, self.advance = dry_run, allow_removals, advance
        self.summary = ImportSummary()
        self.stored_before = set(workspace.parents)  # the benchmarks there were before it
        self.editor = Editor(store, by=stamp.by, clock=lambda: stamp.at, workspace=workspace)
        self.today = stamp.at.date()
        self.imported: set[str] = set()  # the slugs of the benchmarks this import names
        self.pending: dict[str, Outcome] = {}

    async def registries(self, source: Source) -> None:
        for collection in (Collection.LABS, Collection.CATEGORIES):
            for item in source.items(collection.value):
                await _each(
                    self.summary, collection.value, item, partial(self._registry, collection)
                )
                self.advance()

    async def _registry(self, collection: Collection, item: Any) -> None:
        kind: type[LabFields] | type[CategoryFields] = (
            LabFields if collection is Collection.LABS else CategoryFields
        )
        entry = parse(kind, item, today=self.today)
        result = await self.editor.put_lab_or_category(collection, entry)
        self.summary.outcomes.append(Outcome(collection.value, entry.slug, result))

    async def models(self, source: Source) -> None:
        for item in source.items("models"):
            await _each(self.summary, "models", item, self._model)
            self.advance()

    async def _model(self, item: Any) -> None:
        slug, fields = _split(item, ModelFields, self.stamp)
        try:
            _, result = await self.editor.put_model(slug, fields)
        except MovedOn as moved:
            raise _moved_on(moved.slug) from moved
        self.summary.outcomes.append(Outcome("models", slug, result))

    async def benchmarks(self, source: Source) -> None:
        for tracks in (False, True):  # a track after its parent
            for batch in batched(source.items("benchmarks", tracks=tracks), BATCH_SIZE):
                await self.workspace.fetch([item.value.get("slug") for item in batch])
                for item in batch:
                    await _each(self.summary, "benchmarks", item, self._benchmark)
                    self.advance()
                await self._flush()

    async def _benchmark(self, item: Any) -> None:
        item = dict(item)
        raw_reads = item.pop("reads", [])
        if not isinstance(raw_reads, list):
            raise InvalidInput.at(("reads",), "expected a list of reads")
        slug, fields = _split(item, BenchmarkFields, self.stamp)
        self.imported.add(slug)
        parsed, problems = self._reads(raw_reads)
        if problems:
            # The reads that could be read are still checked by the rules of their own rows.
            problems += await self._rule_problems(slug, fields, parsed)
            in_order = sorted(problems, key=lambda problem: problem.location[1])
            raise _by_line(InvalidInput(in_order), raw_reads)
        reads = [read for _, read in parsed]
        before: BenchmarkDoc | None = await self.workspace.load(Collection.BENCHMARKS, slug)
        try:
            after, result = await self.editor.put_benchmark(slug, fields, reads)
        except InvalidInput as error:
            raise _by_line(error, raw_reads) from error
        tracked = await self.workspace.tracked(())
        changes = leaderboard_changes(before, after, tracked) if reads else None
        outcome = Outcome("benchmarks", slug, result, changes=changes)
        if result == "unchanged" or self.dry_run:
            self.summary.outcomes.append(outcome)
        else:
            self.pending[slug] = outcome

    def _reads(self, raw_reads: list[Any]) -> tuple[list[tuple[int, ReadFields]], list[Problem]]:
        """Each read that could be read, by its position, and what is wrong with the others:
        every read checked, so that each bad row is reported."""
        parsed: list[tuple[int, ReadFields]] = []
        problems: list[Problem] = []
        for position, raw_read in enumerate(raw_reads):
            raw = dict(raw_read) if isinstance(raw_read, dict) else raw_read
            if isinstance(raw, dict):
                raw.pop(CSV_LINES, None)
                if self.allow_removals:
                    raw.setdefault("allow_removals", True)
            try:
                parsed.append((position, parse(ReadFields, raw, today=self.today)))
            except InvalidInput as error:
                problems += error.within(("reads", position)).problems
        return parsed, problems

    async def _rule_problems(
        self, slug: str, fields: BenchmarkFields, parsed: list[tuple[int, ReadFields]]
    ) -> list[Problem]:
        """What the rows of `parsed` (each with its position among the benchmark's reads)
        break, by the unit the benchmark has (or is given); none known, nothing said."""
        stored: BenchmarkDoc | None = await self.workspace.load(Collection.BENCHMARKS, slug)
        unit = fields.metric.unit if fields.metric else stored and stored["metric"]["unit"]
        if not unit:
            return []
        entries = chain.from_iterable(read.entries for _, read in parsed)
        tracked = await self.workspace.tracked(entries)
        return [
            problem
            for position, read in parsed
            for problem in InvalidInput(row_problems(read, unit, tracked))
            .within(("reads", position))
            .problems
        ]

    async def _flush(self) -> None:
        for slug, written in await self.workspace.flush():
            outcome = self.pending.pop(slug)
            refused = Outcome("benchmarks", slug, "rejected", _reason(_moved_on(slug)))
            self.summary.outcomes.append(outcome if written else refused)
        self.workspace.forget_benchmarks()

    async def finish(self, source: Source) -> None:
        site = Item(0, source.head)
        summary = self.summary
        await _each(summary, "site", site, lambda data: _site(self.editor, data, summary))
        await self.workspace.sealed()
        # Benchmarks written by this import placed the models already; those it left alone may
        # name a model it created or changed.
        left_alone = self.stored_before - self.imported
        if self.workspace.renamed and not self.dry_run and left_alone:
            renamed = list(self.workspace.renamed)
            receipt = self.workspace.receipt
            await rank_tracked_models(self.store, renamed, skip=self.imported, receipt=receipt)
        self.advance()


def batched(items: Iterable[Item], size: int) -> Iterator[list[Item]]:
    """`items`, `size` at a time (itertools.batched, from Python 3.12)."""
    them = iter(items)
    while batch := list(islice(them, size)):
        yield batch


async def _each(
    summary: ImportSummary, section: str, item: Item, apply: Callable[[Any], Any]
) -> None:
    """Apply one item, turning a refusal into a rejected outcome with its reasons (and the
    file's line, where known)."""
    value = item.value
    key = value.get("slug") if isinstance(value, dict) and section != "site" else None
    try:
        if not isinstance(value, dict):
            raise InvalidInput.at((), "expected an object")
        await apply(value)
    except EditError as error:
        reason = _reason(error) if item.line is None else f"line {item.line}: {_reason(error)}"
        summary.outcomes.append(
            Outcome(section, str(key or f"{section}[{item.index}]"), "rejected", reason)
        )


def leaderboard_changes(
    before: BenchmarkDoc | None, after: BenchmarkDoc, tracked: TrackedModels
) -> str | None:
    """`+1 -0 ~2 rows; leader A (90.0) → B (91.5); tracked leader ...`: what the import's reads
    did to the current leaderboard, as a dry run of a mutation says it (None if nothing)."""
    old = before["entries"] if before is not None else []
    changes = read_changes(old, after["entries"], tracked)
    if not (changes.added or changes.removed or changes.changed):
        return None
    higher = after["metric"]["higher_is_better"]
    rows_before = leaderboard(old, higher_is_better=higher, tracked=tracked)
    rows_after = leaderboard(after["entries"], higher_is_better=higher, tracked=tracked)

    def moved(name: str, pick: Callable[[list[Row]], Row | None]) -> str:
        then, now = (pick(rows) for rows in (rows_before, rows_after))
        shown = [
            f"{row.model_name} ({row.entry['score']:g})" if row else "none" for row in (then, now)
        ]
        return f"{name} {shown[0]}" if shown[0] == shown[1] else f"{name} {shown[0]} → {shown[1]}"

    counts = f"+{len(changes.added)} -{len(changes.removed)} ~{len(changes.changed)} rows"
    return "; ".join((counts, moved("leader", leader), moved("tracked leader", tracked_leader)))


def _split(item: dict[str, Any], fields_model: type[Any], stamp: Stamp) -> tuple[str, Any]:
    rest = dict(item)
    slug = rest.pop("slug", None)
    if not isinstance(slug, str):
        raise InvalidInput.at(("slug",), "is required")
    return check_slug(slug), parse(fields_model, rest, today=stamp.at.date())


async def _site(editor: Editor, data: Dataset, summary: ImportSummary) -> None:
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
        result = await editor.put_site_figures(site)
        summary.outcomes.append(Outcome("site", SITE_FIGURES_ID, result))  # type: ignore[arg-type]
    lines = data.get("provenance", [])
    if lines:
        if not all(isinstance(line, str) for line in lines):
            raise InvalidInput.at(("provenance",), "expected a list of strings")
        result = await editor.add_provenance(lines)
        summary.outcomes.append(Outcome("site", PROVENANCE_ID, result))  # type: ignore[arg-type]


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _moved_on(slug: str) -> InvalidInput:
    return InvalidInput.at(
        ("slug",), f"{slug!r} was changed by another writer during the import; run it again"
    )


def _by_line(error: InvalidInput, raw_reads: list[Any]) -> InvalidInput:
    """The problems inside reads, each named by its CSV line where the read came from a CSV
    file: a row's (`reads[0].entries[3].score` becomes `line[5].score`; a repeated row names
    the line it repeats), and a read's own by its first row's (`reads[0].read_on` becomes
    `line[2].read_on`)."""
    problems = []
    for problem in error.problems:
        where, message = problem.location, problem.message
        lines = _csv_lines(raw_reads, where[1]) if len(where) >= 2 and where[0] == "reads" else None
        if lines is not None and len(where) >= 4 and where[2] == "entries":
            row = where[3]
            if isinstance(row, int) and row < len(lines):
                where = ("line", lines[row], *where[4:])
                if problem.refers_to is not None and isinstance(problem.refers_to[-1], int):
                    first = problem.refers_to[-1]
                    message = message.replace(f"row {first}", f"line {lines[first]}", 1)
        elif lines:
            where = ("line", lines[0], *where[2:])
        problems.append(Problem(where, message))
    return InvalidInput(problems)


def _csv_lines(raw_reads: list[Any], read: Any) -> list[int] | None:
    raw = raw_reads[read] if isinstance(read, int) and read < len(raw_reads) else None
    lines = raw.get(CSV_LINES) if isinstance(raw, dict) else None
    return lines if isinstance(lines, list) else None


def _reason(error: EditError) -> str:
    if isinstance(error, InvalidInput):
        return "; ".join(f"{dotted(p.location) or 'item'}: {p.message}" for p in error.problems)
    return str(error)


BUNDLED_DATASET_WRITER = "bundled dataset"


async def seed(store: Store) -> ImportSummary:
    """Import the bundled dataset (running it again changes nothing), its marker written before
    the first write, and as finished in the same transaction as its last site record."""
    if await store.seed_state() is not SeedState.FINISHED:
        await store.mark_seed(finished=False)
    stamp = Stamp(by=BUNDLED_DATASET_WRITER, at=datetime.now(UTC))
    finished = {SEED_ID: {"finished": True}}
    return await import_dataset(store, load_bundled_dataset(), stamp, seal=finished)


async def ensure_seeded(store: Store) -> ImportSummary | None:
    """Seed a new embedded store (a data directory holding nothing yet), and finish any seed
    that was cut short (the import goes on where it stopped); None if there was nothing to do.
    A MongoDB database is seeded only on request (`almanac seed`).

    By the store's state, not by the command that opens it: whichever opens a new data directory
    first seeds it, once (other processes wait for it). The finished marker is written in the
    same transaction as the seed's last site record (on the embedded store), so a store without
    it was never finished; importing the bundled dataset again changes nothing, so a seed cut
    short is simply run again."""
    async with store.seed_lock():
        state = await store.seed_state()
        if state is SeedState.STARTED or (store.embedded and state is SeedState.NEW):
            return await seed(store)
    return None
