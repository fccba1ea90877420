"""Who reported each score, and whether it is the model's own lab (self-reported).

A benchmark's source has a kind (`store.vocabulary.SourceKind`): its maintainer's leaderboard, a
lab's report or model card, an independent evaluator, or the almanac's own run; an entry may
name another kind. The reporter's lab is the benchmark's maker for its maintainer's leaderboard,
and the source's lab for a lab's report (when the entry keeps the source's kind).
"""

from collections.abc import Collection, Iterable
from dataclasses import dataclass

from resolvers.tracking import TrackedModels, tracked_model
from store import BenchmarkSummaryDoc, EntryDoc, ModelDoc, SourceKind

INDEPENDENT = (SourceKind.THIRD_PARTY.name, SourceKind.ALMANAC.name)
"""Kinds of reporter that are never the model's own lab."""


def source_kind(benchmark: BenchmarkSummaryDoc) -> str | None:
    source = benchmark["source"]
    return None if source is None else source.get("kind")


def reported_by(entry: EntryDoc, benchmark: BenchmarkSummaryDoc) -> str | None:
    """The kind of who reported the entry: its own, else its benchmark source's; None unknown."""
    return entry.get("reported_by") or source_kind(benchmark)


def reporter_lab(entry: EntryDoc, benchmark: BenchmarkSummaryDoc) -> str | None:
    """The slug of the lab that reported the entry, where known."""
    kind = reported_by(entry, benchmark)
    if kind == SourceKind.BENCHMARK_MAINTAINER.name:
        made_by = benchmark["made_by"]
        return None if made_by is None else made_by["slug"]
    source = benchmark["source"]
    if kind == SourceKind.MODEL_DEVELOPER.name and kind == source_kind(benchmark):
        lab = None if source is None else source.get("lab")
        return None if lab is None else lab["slug"]
    return None


def self_reported(
    entry: EntryDoc, model: ModelDoc | None, benchmark: BenchmarkSummaryDoc
) -> bool | None:
    """True when the reporter is the model's own lab (known for a tracked model through its
    lab), false when it is known not to be, None when unknown."""
    kind = reported_by(entry, benchmark)
    if kind in INDEPENDENT:
        return False
    reporter = reporter_lab(entry, benchmark)
    lab = None if model is None or model["lab"] is None else model["lab"]["slug"]
    if reporter is None or lab is None:
        return None
    return reporter == lab


@dataclass(frozen=True, slots=True)
class ReportFilter:
    """Which entries count: those reported by one of `kinds` (all if None), and without those
    known to be self-reported if `exclude_self_reported`."""

    kinds: Collection[str] | None = None
    exclude_self_reported: bool = False

    @property
    def everything(self) -> bool:
        return self.kinds is None and not self.exclude_self_reported


def reported_entries(
    entries: Iterable[EntryDoc],
    benchmark: BenchmarkSummaryDoc,
    tracked: TrackedModels,
    only: ReportFilter,
) -> list[EntryDoc]:
    """The entries `only` lets through (an entry of unknown kind fails any `kinds`)."""
    return [
        entry
        for entry in entries
        if (only.kinds is None or reported_by(entry, benchmark) in only.kinds)
        and not (
            only.exclude_self_reported
            and self_reported(entry, tracked_model(entry["model_name"], tracked), benchmark)
        )
    ]
