"""Fields the store keeps beside the data so that its queries can use indexes.

They are derived by the resolvers' rules on every write, from the data itself, never edited on
their own.
"""

from resolvers.family import family_root
from resolvers.leaderboard import leaderboard
from resolvers.ordering import catalog_order
from resolvers.tracking import TrackedModels, model_key, model_keys
from store import BenchmarkDoc, EntryDoc, ModelDoc, TrackedRankDoc


def with_benchmark_keys(doc: BenchmarkDoc, tracked: TrackedModels) -> BenchmarkDoc:
    """The benchmark with its family root, its current leaderboard (the last read's rows, each
    with its model lookup key), the date of that read, and the place of each tracked model on
    it (`tracked` holds at least the tracked models its rows name)."""
    history = doc.get("history", [])
    latest = history[-1] if history else None
    entries: list[EntryDoc] = [
        {**entry, "model_key": model_key(entry["model_name"])}
        for entry in (latest["entries"] if latest else [])
    ]
    return {
        **doc,
        "family": family_root(doc),
        **catalog_order(doc),
        "entries": entries,
        "scores_refreshed_on": latest["read_on"] if latest else None,
        "tracked_ranks": tracked_ranks(entries, doc["metric"]["higher_is_better"], tracked),
    }


def tracked_ranks(
    entries: list[EntryDoc], higher_is_better: bool, tracked: TrackedModels
) -> list[TrackedRankDoc]:
    """Where each tracked model stands on a leaderboard: what a model's results are ordered by."""
    rows = leaderboard(entries, higher_is_better=higher_is_better, tracked=tracked)
    return [{"model": row.model["slug"], "rank": row.rank} for row in rows if row.model]


def with_model_keys(doc: ModelDoc) -> ModelDoc:
    """The model with the lookup keys of its name and aliases."""
    return {**doc, "keys": model_keys(doc)}
