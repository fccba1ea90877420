"""A benchmark's reads over time: what changed between reads, and every result ever recorded.

Rows are matched across reads by model identity and setting. A model's identity is the tracked
model its name or an alias resolves to, else its normalised name: a row sent under the almanac's
name, the name the source printed, or any alias is the same row.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from resolvers.tracking import TrackedModels, model_key, tracked_model
from store import EntryDoc, ReadDoc

EntryIdentity = tuple[str, str]
"""A leaderboard row within one read: the model's identity and the setting."""

ResultIdentity = tuple[str, str, float, str]
"""One recorded result: the model, the setting, the score and when it was published."""


def model_identity(name: str, tracked: TrackedModels) -> str:
    model = tracked_model(name, tracked)
    return f"model:{model['slug']}" if model is not None else f"name:{model_key(name)}"


def entry_identity(entry: EntryDoc, tracked: TrackedModels) -> EntryIdentity:
    """A row's identity (a stored row, or one sent to the API as the row it makes)."""
    setting = entry["setting"] or ""
    return model_identity(entry["model_name"], tracked), setting.strip().casefold()


def result_identity(entry: EntryDoc, tracked: TrackedModels) -> ResultIdentity:
    return (*entry_identity(entry, tracked), entry["score"], entry["published_on"] or "")


@dataclass(frozen=True)
class RowChange:
    before: EntryDoc
    after: EntryDoc


@dataclass(frozen=True)
class ReadChanges:
    """What one read changed against the read before it."""

    added: list[EntryDoc]
    removed: list[EntryDoc]
    changed: list[RowChange]


def read_changes(
    previous: Iterable[EntryDoc], current: Iterable[Any], tracked: TrackedModels
) -> ReadChanges:
    """Rows added, rows removed, and rows whose score changed, matched by model and setting."""
    before = {entry_identity(entry, tracked): entry for entry in previous}
    after = {entry_identity(entry, tracked): entry for entry in current}
    return ReadChanges(
        added=[entry for key, entry in after.items() if key not in before],
        removed=[entry for key, entry in before.items() if key not in after],
        changed=[
            RowChange(before=before[key], after=entry)
            for key, entry in after.items()
            if key in before and before[key]["score"] != entry["score"]
        ],
    )


def changes_by_read(history: list[ReadDoc], tracked: TrackedModels) -> list[ReadChanges]:
    """Each read's changes against the one before it (the first read adds every row)."""
    previous: list[EntryDoc] = []
    changes = []
    for read in history:
        changes.append(read_changes(previous, read["entries"], tracked))
        previous = read["entries"]
    return changes


def same_entries(first: Iterable[EntryDoc], second: Iterable[EntryDoc]) -> bool:
    """Whether two reads hold the same rows with the same values, in any order."""
    return _canonical(first) == _canonical(second)


def is_recorded(history: list[ReadDoc], read_on: str, entries: list[EntryDoc]) -> bool:
    """Whether this read (its date and its rows) is already in the history."""
    return any(
        read["read_on"] == read_on and same_entries(read["entries"], entries) for read in history
    )


def results_ever_recorded(history: list[ReadDoc], tracked: TrackedModels) -> list[EntryDoc]:
    """Every distinct result in any read, once each, as first recorded.

    A model read again with the same score is the same result (under any of its names);
    re-scored, it is a new one.
    """
    seen: dict[ResultIdentity, EntryDoc] = {}
    for read in history:
        for entry in read["entries"]:
            seen.setdefault(result_identity(entry, tracked), entry)
    return list(seen.values())


def _canonical(entries: Iterable[EntryDoc]) -> list[tuple[object, ...]]:
    return sorted(
        (
            entry["model_name"],
            entry["setting"] or "",
            entry["score"],
            entry["source"] or "",
            entry["published_on"] or "",
            entry.get("note") or "",
            # Absent in older documents: the same as none.
            tuple(sorted((entry.get("interval") or {}).items())),
            entry.get("standard_error") or -1.0,
            entry.get("sample_size") or 0,
            entry.get("reported_by") or "",
        )
        for entry in entries
    )


def entries_of(history: list[ReadDoc]) -> list[EntryDoc]:
    """Every row of every read (what the tracked models of a history are looked up by)."""
    return [entry for read in history for entry in read["entries"]]


def read_as_of(history: list[ReadDoc], day: str) -> ReadDoc | None:
    """The read that was the leaderboard on `day`: the last read on or before it (None before
    the first). `history` is oldest first; dates compare as ISO strings."""
    current = None
    for read in history:
        if read["read_on"] > day:
            break
        current = read
    return current
