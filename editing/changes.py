"""The new document a change produces: pure functions over documents, checked against the rules.

Each returns the document to store (revision bumped, writer and time stamped, derived fields
recomputed), or None when the change would leave the document as it is.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from editing.derived import with_benchmark_keys, with_model_keys
from editing.errors import InvalidInput, Location, Problem
from editing.inputs import (
    MAX_CATEGORIES,
    MAX_TRACKS,
    BenchmarkFields,
    ModelFields,
    ReadFields,
    kept_entry,
)
from resolvers import (
    TrackedModels,
    entry_identity,
    is_recorded,
    model_key,
    read_changes,
    tracked_model,
)
from store import (
    BenchmarkDoc,
    CategoryDoc,
    Date,
    DateTime,
    EntryDoc,
    LabDoc,
    ModelDoc,
    ReadDoc,
    score_range,
)

BOOKKEEPING = ("revision", "updated_by", "updated_at")


@dataclass(frozen=True)
class Stamp:
    """Who makes a change (an API key's name, or the CLI's writer) and when."""

    by: str
    at: datetime

    @property
    def time(self) -> DateTime:
        return utc_time(self.at)


def utc_time(at: datetime) -> DateTime:
    """A moment as stored: ISO 8601 in UTC, to the second (`2026-11-12T09:30:00Z`)."""
    return DateTime(at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))


@dataclass(frozen=True)
class Catalog:
    """What a benchmark's fields may refer to."""

    labs: Mapping[str, LabDoc]
    categories: Mapping[str, CategoryDoc]
    parents: Mapping[str, str | None]
    """Every stored benchmark's parent slug (None for none), by slug."""


NEW_BENCHMARK: dict[str, Any] = {
    **dict.fromkeys(BenchmarkFields.model_fields),  # every field the write side takes, empty
    "status": "IN_USE",
    "prominence": 0,
    "model_card_reports": [],
    "history": [],
}
REQUIRED_BENCHMARK_FIELDS = ("name", "metric", "category", "status", "prominence")
REQUIRED_MODEL_FIELDS = ("name",)


def changed_benchmark(
    current: BenchmarkDoc | None,
    slug: str,
    fields: BenchmarkFields,
    catalog: Catalog,
    stamp: Stamp,
    tracked: TrackedModels,
) -> BenchmarkDoc | None:
    """The benchmark with `fields` set (created if `current` is None); `tracked` holds the
    tracked models its leaderboard names."""
    problems: list[Problem] = []
    doc: dict[str, Any] = dict(current) if current else {**NEW_BENCHMARK, "slug": slug}
    for name in fields.model_fields_set:
        value = getattr(fields, name)
        if name == "made_by" and value is not None:
            value = _known(catalog.labs, value, (name,), "lab", problems)
        elif name == "category" and value is not None:
            value = _known(catalog.categories, value, (name,), "category", problems)
        elif name == "parent" and value is not None:
            problems += _parent_problems(slug, value, catalog)
        elif name == "source" and value is not None:
            value = value.model_dump(mode="json")
            if value["lab"] is not None:
                value["lab"] = _known(catalog.labs, value["lab"], (name, "lab"), "lab", problems)
        elif isinstance(value, list):
            value = [item.model_dump(mode="json") for item in value]
        elif hasattr(value, "model_dump"):
            value = value.model_dump(mode="json")
        doc[name] = value
    if doc["parent"] is None:
        doc["track_position"] = None
    problems += _missing(doc, REQUIRED_BENCHMARK_FIELDS, problems)
    if not problems:
        problems += _score_problems(doc)
    if problems:
        raise InvalidInput(problems)
    derived = with_benchmark_keys(doc, tracked)  # type: ignore[arg-type]
    changed: BenchmarkDoc | None = _stamped(current, derived, stamp)
    return changed


def with_read(
    current: BenchmarkDoc, read: ReadFields, stamp: Stamp, tracked: TrackedModels
) -> BenchmarkDoc | None:
    """The benchmark with `read` as its current leaderboard, kept in its history; `tracked`
    holds the tracked models the read's rows name.

    None if this read (same date, same rows) is already recorded: recording it again is a no-op.
    """
    doc, problems = _recorded(current, read, stamp, tracked)
    if problems:
        raise InvalidInput(problems)
    return doc


def with_reads(
    current: BenchmarkDoc, reads: list[ReadFields], stamp: Stamp, tracked: TrackedModels
) -> BenchmarkDoc | None:
    """The benchmark with each of `reads` recorded in turn, as `with_read` records one (None
    if every one is already recorded).

    Every read is checked, and the problems of all of them are reported together, each within
    its read (`reads[2].entries[0].score`). A refused read is still taken as recorded for the
    checks of the reads after it: they are checked as they would be once it is put right.
    """
    doc, problems = current, []
    for position, read in enumerate(reads):
        recorded, found = _recorded(doc, read, stamp, tracked)
        problems += InvalidInput(found).within(("reads", position)).problems
        doc = recorded or doc
    if problems:
        raise InvalidInput(problems)
    return None if doc is current else doc


def _recorded(
    current: BenchmarkDoc, read: ReadFields, stamp: Stamp, tracked: TrackedModels
) -> tuple[BenchmarkDoc | None, list[Problem]]:
    """The benchmark with `read` recorded (None if it already is), and the rules it breaks."""
    history = current.get("history", [])
    sent: list[EntryDoc] = [kept_entry(entry) for entry in read.entries]  # type: ignore[misc]
    entries = as_printed(sent, history[-1]["entries"] if history else [], tracked)
    if is_recorded(history, read.read_on, entries):
        return None, []
    problems = _entry_problems(entries, current["metric"]["unit"], tracked)
    if history and not read.allow_removals and read.recorded_at is None:
        problems += _removal_problems(history[-1]["entries"], entries, tracked)
    latest = history[-1]["read_on"] if history else None
    if latest is not None and read.read_on < latest:
        problems.append(
            Problem(
                ("read_on",),
                f"{read.read_on} is before the latest read ({latest}); the history only grows",
            )
        )
    recorded: ReadDoc = {
        "revision": current["revision"] + 1,
        "read_on": Date(read.read_on),
        "recorded_by": read.recorded_by or stamp.by,
        "recorded_at": stamp.time if read.recorded_at is None else utc_time(read.recorded_at),
        "entries": entries,
    }
    doc: BenchmarkDoc = {**current, "history": [*history, recorded]}
    changed: BenchmarkDoc | None = _stamped(current, with_benchmark_keys(doc, tracked), stamp)
    return changed, problems


def row_problems(read: ReadFields, unit: str, tracked: TrackedModels) -> list[Problem]:
    """The rules a read's rows break whatever the reads around it: scores within the unit's
    range, one row per model and setting (for a read checked beside others that were refused
    before they could be recorded)."""
    entries: list[EntryDoc] = [kept_entry(entry) for entry in read.entries]  # type: ignore[misc]
    return _entry_problems(entries, unit, tracked)


def _removal_problems(
    current: list[EntryDoc], entries: list[EntryDoc], tracked: TrackedModels
) -> list[Problem]:
    """A read that leaves out rows of the current leaderboard, unless the request says the
    source dropped them (a read restored from an exported history says when it was recorded)."""
    removed = read_changes(current, entries, tracked).removed
    if not removed:
        return []
    named = ", ".join(repr(entry["model_name"]) for entry in removed[:10])
    more = f" and {len(removed) - 10} more" if len(removed) > 10 else ""
    return [
        Problem(
            ("entries",),
            f"leaves out {len(removed)} rows of the current leaderboard ({named}{more}): send "
            "every row the source shows, or say it dropped them (`allowRemovals`; `allow_removals` "
            "in a file; `almanac import --allow-removals`)",
        )
    ]


def as_printed(
    entries: list[EntryDoc], previous: list[EntryDoc], tracked: TrackedModels
) -> list[EntryDoc]:
    """The rows with the names their source printed: a row sent under the almanac's own name
    for a tracked model (as the API shows it) keeps the name the previous read printed for it.
    """
    printed = {entry_identity(entry, tracked): entry["model_name"] for entry in previous}
    kept = []
    for entry in entries:
        model = tracked_model(entry["model_name"], tracked)
        earlier = printed.get(entry_identity(entry, tracked))
        if model is not None and entry["model_name"] == model["name"] and earlier is not None:
            entry = {**entry, "model_name": earlier}
        kept.append(entry)
    return kept


NEW_MODEL: dict[str, Any] = {
    "aliases": [],
    "lab": None,
    "released_on": None,
    "capability_index_rank": None,
}


def changed_model(
    current: ModelDoc | None,
    slug: str,
    fields: ModelFields,
    labs: Mapping[str, LabDoc],
    owners: Mapping[str, str],
    stamp: Stamp,
) -> ModelDoc | None:
    """The model with `fields` set (created if `current` is None).

    `owners` gives, for lookup keys of names and aliases, the slug of the model that has it.
    """
    problems: list[Problem] = []
    doc: dict[str, Any] = dict(current) if current else {**NEW_MODEL, "slug": slug}
    for name in fields.model_fields_set:
        value = getattr(fields, name)
        if name == "lab" and value is not None:
            value = _known(labs, value, (name,), "lab", problems)
        elif name == "aliases":
            value = value or []
        doc[name] = value
    problems += _missing(doc, REQUIRED_MODEL_FIELDS, problems)
    if not problems:
        problems += _name_problems(slug, doc["name"], doc["aliases"], owners)
    if problems:
        raise InvalidInput(problems)
    changed: ModelDoc | None = _stamped(current, with_model_keys(doc), stamp)  # type: ignore[arg-type]
    return changed


def check_room_for_category(known: Mapping[str, CategoryDoc]) -> None:
    """A new category fits only while the almanac holds fewer than `MAX_CATEGORIES`."""
    if len(known) >= MAX_CATEGORIES:
        raise InvalidInput.at(
            ("slug",), f"the almanac holds {len(known)} categories, the most it may hold"
        )


def _stamped(current: Any, doc: Any, stamp: Stamp) -> Any:
    if current is not None and _content(current) == _content(doc):
        return None
    revision = 1 if current is None else current["revision"] + 1
    return {**doc, "revision": revision, "updated_by": stamp.by, "updated_at": stamp.time}


def _content(doc: Any) -> dict[str, Any]:
    return {key: value for key, value in doc.items() if key not in BOOKKEEPING}


def _missing(doc: dict[str, Any], required: tuple[str, ...], found: list[Problem]) -> list[Problem]:
    """Required fields left empty (unless already refused for another reason)."""
    refused = {problem.location[0] for problem in found}
    return [
        Problem((name,), "is required")
        for name in required
        if doc.get(name) is None and name not in refused
    ]


def _known(
    known: Mapping[str, Any], slug: str, location: Location, what: str, problems: list[Problem]
) -> Any:
    found = known.get(slug)
    if found is None:
        problems.append(Problem(location, f"unknown {what} {slug!r}"))
        return None
    return {"slug": found["slug"], "name": found["name"]}


def _parent_problems(slug: str, parent: str, catalog: Catalog) -> list[Problem]:
    location: Location = ("parent",)
    if parent == slug:
        return [Problem(location, "a benchmark cannot be its own parent")]
    if parent not in catalog.parents:
        return [Problem(location, f"unknown benchmark {parent!r}")]
    if catalog.parents[parent] is not None:
        return [Problem(location, f"{parent!r} is itself a track; tracks do not nest")]
    if slug in catalog.parents.values():
        return [Problem(location, f"{slug!r} has tracks of its own, so it cannot be a track")]
    tracks = [track for track, of in catalog.parents.items() if of == parent and track != slug]
    if len(tracks) >= MAX_TRACKS:
        return [Problem(location, f"{parent!r} has {len(tracks)} tracks, the most a family holds")]
    return []


def _score_problems(doc: dict[str, Any]) -> list[Problem]:
    """Scores (in every read of the history), ceiling and reports within the metric's range."""
    unit = doc["metric"]["unit"]
    problems = []
    for read in doc.get("history", []):
        # Reads already kept are checked by their names, as they were recorded.
        problems += _entry_problems(read["entries"], unit, {}, ("metric", "unit"))
    problems += _range_problems(doc["ceiling"], unit, ("ceiling",))
    for index, report in enumerate(doc["model_card_reports"]):
        problems += _range_problems(report["score"], unit, ("model_card_reports", index, "score"))
    return problems


def _entry_problems(
    entries: list[EntryDoc], unit: str, tracked: TrackedModels, location: Location | None = None
) -> list[Problem]:
    """Scores within range, and one row per model (under any of its names) and setting."""
    problems: list[Problem] = []
    first_row: dict[tuple[str, str], int] = {}
    for index, entry in enumerate(entries):
        where = location or ("entries", index, "score")
        problems += _range_problems(entry["score"], unit, where)
        interval = entry.get("interval")
        if interval is not None:
            for end in ("low", "high"):
                at = location or ("entries", index, "interval", end)
                problems += _range_problems(interval[end], unit, at)
        identity = entry_identity(entry, tracked)
        if identity in first_row:
            problems.append(
                Problem(
                    ("entries", index),
                    f"repeats row {first_row[identity]}: one row per model and setting "
                    f"({entry['model_name']!r}, setting {entry['setting']!r})",
                    refers_to=("entries", first_row[identity]),
                )
            )
        first_row.setdefault(identity, index)
    return problems


def _range_problems(score: float | None, unit: str, location: Location) -> list[Problem]:
    allowed = score_range(unit)
    if score is None or allowed is None or allowed[0] <= score <= allowed[1]:
        return []
    return [Problem(location, f"{score} is outside {allowed[0]:g}-{allowed[1]:g} for {unit}")]


def _name_problems(
    slug: str, name: str, aliases: list[str], owners: Mapping[str, str]
) -> list[Problem]:
    problems = []
    seen: dict[str, Location] = {}
    for location, spelling in [(("name",), name)] + [
        (("aliases", index), alias) for index, alias in enumerate(aliases)
    ]:
        key = model_key(spelling)
        owner = owners.get(key)
        if owner is not None and owner != slug:
            problems.append(Problem(location, f"{spelling!r} already belongs to model {owner!r}"))
        elif key in seen:
            problems.append(
                Problem(location, f"{spelling!r} repeats {'.'.join(map(str, seen[key]))}")
            )
        seen.setdefault(key, location)
    return problems
