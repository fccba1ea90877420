"""Which leaderboard entries are models we track (page-spec rule 1)."""

from collections.abc import Iterable, Mapping

from store import EntryDoc, ModelDoc

TrackedModels = Mapping[str, ModelDoc]
"""The tracked models a request knows about, by the lookup key of each name and alias."""


def model_key(name: str) -> str:
    """The lookup key of a model name: case-insensitive, surrounding spaces ignored."""
    return name.strip().casefold()


def entry_key(entry: EntryDoc) -> str:
    """The lookup key of an entry's model name: kept by the store beside each current entry's
    name (editing.derived), made here for the entries of older reads."""
    return entry.get("model_key") or model_key(entry["model_name"])


def model_keys(model: ModelDoc) -> list[str]:
    """Every key a model answers to: its own name and each alias, without repeats."""
    return list(dict.fromkeys(model_key(name) for name in [model["name"], *model["aliases"]]))


def tracked_model(entry_name: str, tracked: TrackedModels) -> ModelDoc | None:
    """The tracked model an entry's name (or an alias of it) refers to, if any."""
    return tracked.get(model_key(entry_name))


def index_by_key(models: Iterable[ModelDoc]) -> dict[str, ModelDoc]:
    """Index tracked models by every key they answer to."""
    return {key: model for model in models for key in model_keys(model)}
