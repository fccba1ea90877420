"""Fields the store keeps beside the data so that its queries can use indexes.

They are derived on every write from the data itself, never edited on their own.
"""

from resolvers.tracking import model_key, model_keys
from store.documents import BenchmarkDoc, ModelDoc


def with_benchmark_keys(doc: BenchmarkDoc) -> BenchmarkDoc:
    """The benchmark with its family root and each entry's model lookup key."""
    entries = [{**entry, "model_key": model_key(entry["model_name"])} for entry in doc["entries"]]
    return {**doc, "family": doc["parent"] or doc["slug"], "entries": entries}  # type: ignore[typeddict-item]


def with_model_keys(doc: ModelDoc) -> ModelDoc:
    """The model with the lookup keys of its name and aliases."""
    return {**doc, "keys": model_keys(doc)}
