"""The bundled dataset and loading it into a store, idempotently."""

import json
from dataclasses import dataclass
from importlib import resources
from typing import Any, TypedDict

from store.derived import with_benchmark_keys, with_model_keys
from store.documents import BenchmarkDoc, ModelDoc, SiteFiguresDoc
from store.queries import SITE_FIGURES_ID, Store


class Dataset(TypedDict):
    format: str
    provenance: list[str]
    site: SiteFiguresDoc
    models: list[ModelDoc]
    benchmarks: list[BenchmarkDoc]


@dataclass(frozen=True)
class SeedSummary:
    benchmarks: int
    models: int
    created: int
    updated: int
    unchanged: int


def load_bundled_dataset() -> Dataset:
    """The real published results bundled with the API (see its `provenance`)."""
    text = resources.files("store").joinpath("data/almanac.json").read_text(encoding="utf-8")
    dataset: Dataset = json.loads(text)
    return dataset


async def seed(store: Store, dataset: Dataset) -> SeedSummary:
    """Write the dataset, replacing each document by its slug: running it twice changes nothing."""
    outcomes: list[str] = []
    for model in dataset["models"]:
        outcomes.append(
            await _replace(store.db.models, {"slug": model["slug"]}, with_model_keys(model))
        )
    for benchmark in dataset["benchmarks"]:
        doc = with_benchmark_keys(benchmark)
        outcomes.append(await _replace(store.db.benchmarks, {"slug": doc["slug"]}, doc))
    site = {"_id": SITE_FIGURES_ID, **dataset["site"]}
    outcomes.append(await _replace(store.db.site, {"_id": SITE_FIGURES_ID}, site))
    return SeedSummary(
        benchmarks=len(dataset["benchmarks"]),
        models=len(dataset["models"]),
        created=outcomes.count("created"),
        updated=outcomes.count("updated"),
        unchanged=outcomes.count("unchanged"),
    )


async def _replace(collection: Any, key: dict[str, Any], doc: Any) -> str:
    result = await collection.replace_one(key, doc, upsert=True)
    if result.upserted_id is not None:
        return "created"
    return "updated" if result.modified_count else "unchanged"
