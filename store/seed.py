"""The bundled dataset and loading it into a store, idempotently."""

import json
from dataclasses import dataclass
from importlib import resources
from typing import TypedDict

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
        model_doc = with_model_keys(model)
        outcomes.append(await store.replace("models", {"slug": model_doc["slug"]}, model_doc))
    for benchmark in dataset["benchmarks"]:
        doc = with_benchmark_keys(benchmark)
        outcomes.append(await store.replace("benchmarks", {"slug": doc["slug"]}, doc))
    site = {"_id": SITE_FIGURES_ID, **dataset["site"]}
    outcomes.append(await store.replace("site", {"_id": SITE_FIGURES_ID}, site))
    return SeedSummary(
        benchmarks=len(dataset["benchmarks"]),
        models=len(dataset["models"]),
        created=outcomes.count("created"),
        updated=outcomes.count("updated"),
        unchanged=outcomes.count("unchanged"),
    )
