"""Fields the store keeps beside the data so that its queries can use indexes.

They are derived on every write from the data itself, never edited on their own.
"""

from resolvers.tracking import model_key, model_keys
from store.documents import BenchmarkDoc, EntryDoc, ModelDoc


def with_benchmark_keys(doc: BenchmarkDoc) -> BenchmarkDoc:
    """The benchmark with its family root, and its current leaderboard (the last read's rows,
    each with its model lookup key) and the date of that read."""
    history = doc.get("history", [])
    latest = history[-1] if history else None
    entries: list[EntryDoc] = [
        {**entry, "model_key": model_key(entry["model_name"])}
        for entry in (latest["entries"] if latest else [])
    ]
    return {
        **doc,
        "family": doc["parent"] or doc["slug"],
        # What the catalog and siblings are ordered by: in use first, then names ignoring case.
        "retired": 0 if doc["status"] == "IN_USE" else 1,
        "name_key": doc["name"].casefold(),
        "entries": entries,
        "scores_refreshed_on": latest["read_on"] if latest else None,
    }


def with_model_keys(doc: ModelDoc) -> ModelDoc:
    """The model with the lookup keys of its name and aliases."""
    return {**doc, "keys": model_keys(doc)}
