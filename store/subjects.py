"""What a change touches and what a read depends on, named alike: subjects.

A write records the subjects it changed (store.changes); a kept answer records the subjects
its execution read (store.reads). An answer stays good while none of its subjects changed.
Each subject is a short string:

- `benchmark:<slug>`: one benchmark's document (its leaderboard, names, everything shown of it);
- `family:<root>`: which benchmarks form the family rooted at `root` (a parent and its tracks);
- `category:<slug>`: which benchmarks a category holds, and their order (siblings, counts);
- `catalog`: which benchmarks exist and what catalogs filter and sort them on;
- `models`: which models are tracked, and the names and aliases they answer to;
- `model:<slug>`: one tracked model's document;
- `ranks:<model>`: where a tracked model is placed on the leaderboards (its standings);
- `leaders:<slug>`: the leader and tracked leader kept with a benchmark (its catalog row's),
  placed anew when the tracked models its rows name change;
- `listings`: which benchmarks list which model names;
- `labs`, `categories`, `site`, `keys`: those collections, each as a whole;
- `*`: everything (a read this module cannot describe: any change retires it).
"""

from collections.abc import Iterable
from typing import Any

CATALOG = "catalog"
MODELS = "models"
LISTINGS = "listings"
LABS = "labs"
CATEGORIES = "categories"
SITE = "site"
KEYS = "keys"
EVERYTHING = "*"

# The fields a benchmark's catalog rows are found and ordered by (store.queries.ORDER_FIELDS
# and BenchmarkFilter), with the category's name (the categories' list shows it).
CATALOG_FIELDS = ("family", "status", "kind", "retired", "demotion", "name_key", "release_key")


def benchmark(slug: str) -> str:
    return f"benchmark:{slug}"


def family(root: str) -> str:
    return f"family:{root}"


def category(slug: str) -> str:
    return f"category:{slug}"


def model(slug: str) -> str:
    return f"model:{slug}"


def ranks(model_slug: str) -> str:
    return f"ranks:{model_slug}"


def leaders(slug: str) -> str:
    return f"leaders:{slug}"


def placements(doc: Any) -> set[tuple[str, int]]:
    """A benchmark's tracked models and their places, as (model, rank) pairs."""
    return {(rank["model"], rank["rank"]) for rank in doc.get("tracked_ranks") or []}


def ranks_moved(before: set[tuple[str, int]], after: set[tuple[str, int]]) -> set[str]:
    """The tracked models whose place on one leaderboard changed (came, went or moved)."""
    return {ranks(model_slug) for model_slug, _ in before ^ after}


def _catalog_facts(doc: Any) -> tuple[Any, ...]:
    made_by = doc.get("made_by")
    return (
        doc["category"]["slug"],
        doc["category"]["name"],
        None if made_by is None else made_by["slug"],
        *(doc.get(field) for field in CATALOG_FIELDS),
    )


def _model_keys(doc: Any) -> set[str]:
    return {entry["model_key"] for entry in doc["entries"] if "model_key" in entry}


def benchmark_written(
    before: Any | None, after: Any, before_ranks: set[tuple[str, int]]
) -> set[str]:
    """What writing benchmark `after` in place of `before` (None: new) changed. `before_ranks`
    are its placements as stored (the embedded store keeps them beside the document)."""
    touched = {benchmark(after["slug"])}
    if before is None or _catalog_facts(before) != _catalog_facts(after):
        touched |= {CATALOG, category(after["category"]["slug"]), family(after["family"])}
        if before is not None:
            touched |= {category(before["category"]["slug"]), family(before["family"])}
    if before is None or _model_keys(before) != _model_keys(after):
        touched.add(LISTINGS)
    return touched | ranks_moved(before_ranks, placements(after))


def model_written(before: Any | None, after: Any) -> set[str]:
    """What writing model `after` in place of `before` (None: new) changed."""
    touched = {model(after["slug"])}
    if before is None or set(before.get("keys", [])) != set(after.get("keys", [])):
        touched.add(MODELS)
    return touched


def written(collection: str, before: Any | None, after: Any) -> set[str]:
    """What writing `after` (in place of `before`) to a collection other than benchmarks
    changed."""
    if collection == "models":
        return model_written(before, after)
    return {COLLECTION_SUBJECTS.get(collection, EVERYTHING)}


COLLECTION_SUBJECTS = {"labs": LABS, "categories": CATEGORIES, "site": SITE, "api_keys": KEYS}


def of_benchmarks(docs: Iterable[Any]) -> set[str]:
    """What reading these benchmark documents depends on: each of them."""
    return {benchmark(doc["slug"]) for doc in docs}


def of_summaries(docs: Iterable[Any]) -> set[str]:
    """What reading these benchmarks' summaries depends on: each of them, and the leaders
    kept with each (placed anew without a write of the benchmark)."""
    return {subject for doc in docs for subject in (benchmark(doc["slug"]), leaders(doc["slug"]))}


ALL_KEY = "all"
"""The surrogate key every answer carries: purging it purges everything."""
ANY_KEY = "any"
"""The surrogate key of answers that read what no subject names: any change purges it."""
MAX_KEYS_BYTES = 8192  # beyond, an answer is keyed as depending on anything


def surrogate_keys(reads: Iterable[str]) -> list[str]:
    """The keys a cache in front of the API files an answer under (`Surrogate-Key`), from what
    its computation read: a change's `purge_keys` name every answer it may have changed."""
    keys = sorted(ANY_KEY if subject == EVERYTHING else subject for subject in reads)
    if sum(len(key) + 1 for key in keys) > MAX_KEYS_BYTES:
        keys = [ANY_KEY]
    return [ALL_KEY, *keys]


def purge_keys(subjects: Iterable[str]) -> list[str]:
    """The surrogate keys to purge after a change of these subjects."""
    return sorted({ANY_KEY, *subjects})
