"""Fields the store keeps beside the data so that its queries can use indexes.

They are derived on every write from the data itself, never edited on their own.
"""

from resolvers.leaderboard import leaderboard
from resolvers.tracking import TrackedModels, model_key, model_keys
from store.documents import BenchmarkDoc, EntryDoc, ModelDoc, SortFieldsDoc, TrackedRankDoc


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
        "family": doc["parent"] or doc["slug"],
        **sort_fields(doc),
        "entries": entries,
        "scores_refreshed_on": latest["read_on"] if latest else None,
        "tracked_ranks": tracked_ranks(entries, doc["metric"]["higher_is_better"], tracked),
    }


def sort_fields(doc: BenchmarkDoc) -> SortFieldsDoc:
    """What catalogs and siblings are ordered by, each field ascending (store.queries)."""
    released = doc["released_on"]
    return {
        "retired": 0 if doc["status"] == "IN_USE" else 1,  # in use first
        "demotion": -doc["prominence"],  # higher prominence first
        "name_key": doc["name"].casefold(),  # names ignoring case
        # Newest release first, unknown last: a month counted down from 9999-12.
        "release_key": "~"
        if released is None
        else f"{9999 - int(released[:4]):04d}-{12 - int(released[5:7]):02d}",
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
