"""A tool's files in: read (each checked whole), matched to benchmarks, put in their units, then
turned into one read per benchmark (its current leaderboard with the files' rows added or
replacing those of the same model and setting) and imported through editing's one write path.

The import is checked whole first (a dry run); any refusal refuses it all and nothing is
written. A dry run says each row added, changed or removed and each leader change.
"""

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from editing import FORMAT, ImportSummary, Stamp, counted, import_dataset
from interchange.formats import detect, files_in, read_tool_file
from interchange.matching import LEFT_OUT, Catalog, Matcher, read_mapping
from interchange.results import ToolFile, ToolResult
from interchange.units import Irreconcilable, factor
from resolvers import entry_identity, index_by_key, read_changes
from store import ChangeReceipt, EntryDoc, SourceKind, Store

ENTRY_FIELDS = (
    "model_name",
    "setting",
    "score",
    "source",
    "published_on",
    "note",
    "interval",
    "standard_error",
    "sample_size",
    "reported_by",
)
SHOWN = 12
"""Problems named in the one line a refused import says (the count of the rest follows)."""
REPORTERS = tuple(kind.name for kind in SourceKind)


class ImportRefused(Exception):
    """The import as a whole is refused (one line naming each problem); nothing was written."""


@dataclass(frozen=True)
class ImportOptions:
    format: str | None = None
    benchmark: str | None = None
    map_file: Path | None = None
    read_on: date | None = None
    reported_by: str | None = None


@dataclass
class RowChange:
    benchmark: str
    change: str  # added, changed or removed
    model_name: str
    setting: str | None
    before: float | None
    after: float | None

    def describe(self) -> str:
        setting = f" ({self.setting})" if self.setting else ""
        ends = (self.before, self.after)
        scores = " → ".join(f"{score:g}" for score in ends if score is not None)
        return f"{self.change:7} {self.benchmark}: {self.model_name}{setting} {scores}"


@dataclass
class ImportReport:
    files: list[ToolFile]
    summary: ImportSummary
    rows: list[RowChange] = field(default_factory=list)
    written: bool = False


def read_files(paths: Iterable[Path], kind: str | None) -> list[ToolFile]:
    """Every file read (a folder's files too), each checked whole; the first bad one refused."""
    found = files_in(paths)
    if not found:
        raise ImportRefused("no file to import")
    return [read_tool_file(path, kind or detect(path)) for path in found]


async def import_tool_files(
    store: Store,
    files: list[ToolFile],
    options: ImportOptions,
    stamp: Stamp,
    *,
    dry_run: bool = False,
    receipt: ChangeReceipt | None = None,
) -> ImportReport:
    """The files' scores imported whole, or refused whole (ImportRefused, FileRefused); the
    changes written noted in `receipt`, if given."""
    if options.reported_by is not None and options.reported_by not in REPORTERS:
        raise ImportRefused(f"--reported-by: expected one of {', '.join(REPORTERS)}")
    catalog = await Catalog.of(store)
    if options.benchmark is not None and options.benchmark not in catalog.by_slug:
        raise ImportRefused(f"--benchmark: no benchmark has the slug {options.benchmark!r}")
    mapping = read_mapping(options.map_file, catalog) if options.map_file else {}
    matcher = Matcher(catalog, options.benchmark, mapping)
    placed = _placed(files, matcher)
    rows = _rows(files, placed, catalog, options)
    read_on = (options.read_on or stamp.at.date()).isoformat()
    current = {doc["slug"]: doc for doc in await store.benchmarks_by_slugs(sorted(rows))}
    tracked = index_by_key(await store.models())
    report = ImportReport(files, ImportSummary())
    benchmarks = []
    for slug, new_rows in rows.items():
        before: list[Any] = [_entry(entry) for entry in current[slug]["entries"]]
        after = _merged(before, new_rows, tracked)
        changes = read_changes(before, after, tracked)
        report.rows += [
            RowChange(slug, "added", e["model_name"], e["setting"], None, e["score"])
            for e in changes.added
        ]
        report.rows += [
            RowChange(
                slug,
                "changed",
                c.after["model_name"],
                c.after["setting"],
                c.before["score"],
                c.after["score"],
            )
            for c in changes.changed
        ]
        benchmarks.append({"slug": slug, "reads": [{"read_on": read_on, "entries": after}]})
    dataset = {
        "format": FORMAT,  # what import_dataset reads
        "provenance": [
            _provenance(number, file, placed, read_on) for number, file in enumerate(files)
        ],
        "benchmarks": benchmarks,
    }
    checked = await import_dataset(store, dataset, stamp, dry_run=True)
    if checked.rejected:
        raise ImportRefused(
            _joined(
                f"{outcome.section} {outcome.key}: {outcome.reason}" for outcome in checked.rejected
            )
        )
    if dry_run:
        report.summary = checked
        return report
    report.summary = await import_dataset(store, dataset, stamp, receipt=receipt)
    report.written = not report.summary.rejected
    return report


def _placed(files: list[ToolFile], matcher: Matcher) -> dict[tuple[int, int], str]:
    """Each result's benchmark, by (file, result); every name matching none in one refusal."""
    placed: dict[tuple[int, int], str] = {}
    unknown: list[str] = []
    for number, file in enumerate(files):
        for index, result in enumerate(file.results):
            slug = matcher.slug(result.task)
            if slug is None:
                unknown.append(f"{result.task!r} ({file.path}, {result.where})")
            elif slug != LEFT_OUT:
                placed[number, index] = slug
    if unknown:
        raise ImportRefused(
            "no benchmark matches (by slug, name or alias; say which with --benchmark or --map): "
            + _joined(unknown)
        )
    return placed


def _rows(
    files: list[ToolFile],
    placed: dict[tuple[int, int], str],
    catalog: Catalog,
    options: ImportOptions,
) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """Each benchmark's new rows (with where each came from), in the benchmark's unit."""
    rows: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    problems: list[str] = []
    for (number, index), slug in placed.items():
        file, result = files[number], files[number].results[index]
        where = f"{file.path}, {result.where}"
        try:
            multiplier = factor(result, catalog.by_slug[slug].unit)
        except Irreconcilable as error:
            problems.append(f"{where}: {error} ({slug})")
            continue
        rows.setdefault(slug, []).append((where, _row(file, result, multiplier, options)))
    if problems:
        raise ImportRefused(_joined(problems))
    return rows


def _row(
    file: ToolFile, result: ToolResult, multiplier: float, options: ImportOptions
) -> dict[str, Any]:
    def scaled(value: float) -> float:
        return float(f"{value * multiplier:.12g}")  # 0.1 * 100 is 10.000000000000002

    row: dict[str, Any] = {
        "model_name": result.model_name,
        "setting": result.setting,
        "score": scaled(result.score),
        "source": _source(file, result),
        "published_on": result.published_on,
        "note": result.note,
    }
    if result.interval is not None:
        low, high, level = result.interval
        row["interval"] = {"low": scaled(low), "high": scaled(high), "level": level}
    if result.standard_error is not None:
        row["standard_error"] = scaled(result.standard_error)
    if result.sample_size is not None:
        row["sample_size"] = result.sample_size
    reported_by = options.reported_by or result.reported_by
    if reported_by is not None:
        row["reported_by"] = reported_by
    return row


def _source(file: ToolFile, result: ToolResult) -> str | None:
    """The row's source: what the file names, and how it came (tool, file and its hash)."""
    if result.kept_source:
        return result.source
    return f"{result.source}, via {file.provenance()}" if result.source else file.provenance()


def _entry(entry: EntryDoc) -> dict[str, Any]:
    """A stored row as a read sends it (what the store derives left out)."""
    return {name: entry[name] for name in ENTRY_FIELDS if name in entry}  # type: ignore[literal-required]


def _merged(
    before: list[dict[str, Any]], new_rows: list[tuple[str, dict[str, Any]]], tracked: Any
) -> list[dict[str, Any]]:
    """The current rows with each new row added, or in place of the row of its model and
    setting; two new rows for one model and setting are refused, naming both."""
    merged = {entry_identity(entry, tracked): entry for entry in before}  # type: ignore[arg-type]
    seen: dict[Any, str] = {}
    for where, row in new_rows:
        identity = entry_identity(row, tracked)  # type: ignore[arg-type]
        if identity in seen:
            setting = f", setting {row['setting']!r}" if row["setting"] else ""
            raise ImportRefused(
                f"{where}: a second score for {row['model_name']!r}{setting} on one benchmark "
                f"(the first: {seen[identity]}); map one elsewhere, or leave it out with --map"
            )
        seen[identity] = where
        merged[identity] = row
    return list(merged.values())


def _provenance(
    number: int, file: ToolFile, placed: dict[tuple[int, int], str], read_on: str
) -> str:
    """The almanac's provenance line for a file: what made it, its name and hash, and where
    its scores went."""
    slugs = sorted({slug for (which, _), slug in placed.items() if which == number})
    count = sum(1 for which, _ in placed if which == number)
    into = ", ".join(slugs) or "no benchmark"
    scores = counted(count, "score")
    return f"Imported on {read_on}: {scores} from {file.provenance()} into {into}."


def _joined(problems: Iterable[str]) -> str:
    listed = list(problems)
    more = f"; and {len(listed) - SHOWN} more" if len(listed) > SHOWN else ""
    return "; ".join(listed[:SHOWN]) + more
