"""The leaderboard as the page shows it, and the figures read off it (page-spec rules 2-8)."""

from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

from resolvers.tracking import TrackedModels, entry_key, tracked_model
from store import Date, EntryDoc, ModelDoc


class Row(NamedTuple):
    """One leaderboard row: a model's best entry, with its place. A named tuple, not a frozen
    dataclass: as immutable, made in half the time (a frozen dataclass sets each field through
    `object.__setattr__`), and a release makes a row for every model on 10,000 leaderboards."""

    rank: int
    model_name: str
    model: ModelDoc | None
    entry: EntryDoc

    @property
    def tracked(self) -> bool:
        return self.model is not None


@dataclass(frozen=True, slots=True)
class ChartPoint:
    """One stored result, as a dot on the scores-over-time chart."""

    date: Date | None
    score: float
    model_name: str
    model: ModelDoc | None
    entry: EntryDoc

    @property
    def tracked(self) -> bool:
        return self.model is not None


def display_name(entry: EntryDoc, model: ModelDoc | None) -> str:
    """A tracked entry shows the almanac's model name; any other, the name as stored."""
    return model["name"] if model is not None else entry["model_name"]


def leaderboard(
    entries: Iterable[EntryDoc], *, higher_is_better: bool, tracked: TrackedModels
) -> list[Row]:
    """One row per model with its best score, best first, ties by model name A to Z.

    Tracked entries group by their model (so aliases merge), the others by name. Ranks are
    1-based positions: tied scores still get distinct, consecutive ranks.
    """
    sign = 1.0 if higher_is_better else -1.0
    best: dict[tuple[bool, str], tuple[EntryDoc, ModelDoc | None]] = {}
    for entry in entries:
        key = entry_key(entry)  # what `tracked_model` looks up
        model = tracked.get(key)
        group = (True, model["slug"]) if model else (False, key)
        held = best.get(group)
        if held is None or _beats(entry, held[0], sign):
            best[group] = (entry, model)
    # Each row's name made once, for the sort and the row. Sorted as tuples: by score, name,
    # then the order found, which no two share (the sort never compares documents, and keeps
    # the found order of ties, as a stable sort would).
    ordered = [
        (
            -sign * entry["score"],
            (name := display_name(entry, model)).casefold(),
            name,
            found,
            model,
            entry,
        )
        for found, (entry, model) in enumerate(best.values())
    ]
    ordered.sort()
    return [
        Row(place, name, model, entry)
        for place, (_, _, name, _, model, entry) in enumerate(ordered, start=1)
    ]


def _beats(entry: EntryDoc, held: EntryDoc, sign: float) -> bool:
    """Whether `entry` is a better representative of its model than `held`.

    The better score wins; on a tie, the more recently published one, then the setting name,
    so that the choice never depends on storage order.
    """
    if entry["score"] != held["score"]:
        return sign * entry["score"] > sign * held["score"]
    newer = (entry["published_on"] or "", entry["setting"] or "")
    return newer > (held["published_on"] or "", held["setting"] or "")


def leader(rows: list[Row]) -> Row | None:
    """The row that tops the leaderboard, tracked or not."""
    return rows[0] if rows else None


def tracked_leader(rows: list[Row]) -> Row | None:
    """The best row of a model we track: the leader named anywhere outside the page's table."""
    return next((row for row in rows if row.tracked), None)


@dataclass(frozen=True, slots=True)
class Standing:
    """Where a tracked model stands on one leaderboard: its best row, and whether it leads."""

    row: Row
    leads: bool
    leads_tracked_models: bool


def standing(rows: list[Row], model_slug: str) -> Standing | None:
    """The tracked model's standing on this leaderboard; None if the leaderboard lacks it."""
    mine = next((row for row in rows if row.model and row.model["slug"] == model_slug), None)
    if mine is None:
        return None
    return Standing(
        row=mine, leads=leader(rows) is mine, leads_tracked_models=tracked_leader(rows) is mine
    )


def tracked_model_count(rows: list[Row]) -> int:
    return sum(1 for row in rows if row.tracked)


def strongest_model_tested(rows: list[Row]) -> ModelDoc | None:
    """Of the tracked models on the leaderboard, the best (lowest) capability-index rank."""
    ranked = [
        row.model
        for row in rows
        if row.model is not None and row.model["capability_index_rank"] is not None
    ]
    return min(ranked, key=lambda model: model["capability_index_rank"] or 0, default=None)


def last_model_added(rows: list[Row]) -> ModelDoc | None:
    """Of the tracked models on the leaderboard, the newest by release month."""
    dated = [
        row.model for row in rows if row.model is not None and row.model["released_on"] is not None
    ]
    return max(dated, key=lambda model: model["released_on"] or "", default=None)


def scores_over_time(entries: Iterable[EntryDoc], *, tracked: TrackedModels) -> list[ChartPoint]:
    """Every stored result, one point each (not only each model's best), oldest first."""
    points = []
    for entry in entries:
        model = tracked_model(entry["model_name"], tracked)
        points.append(
            ChartPoint(
                date=entry["published_on"],
                score=entry["score"],
                model_name=display_name(entry, model),
                model=model,
                entry=entry,
            )
        )
    points.sort(key=lambda point: (point.date is None, point.date or "", point.model_name))
    return points
