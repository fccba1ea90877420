"""The almanac exported in its own file format (`benchmark-almanac/1`, editing.dataset): read
from the store a batch at a time and written as it is read, so an export's memory is bounded
whatever the almanac's size. Importing an export into an empty store gives it back."""

import json
from collections.abc import AsyncIterator, Callable
from typing import Any, TextIO

from editing.dataset import FORMAT, ITEMS, SECTIONS, Dataset
from editing.inputs import (
    OMITTED_WHEN_EMPTY,
    READ_REQUEST_ONLY,
    BenchmarkFields,
    EntryFields,
    ModelFields,
    ReadFields,
    SourceFields,
)
from store import BenchmarkDoc, Collection, ModelDoc, Store

EXPORT_BATCH = 4
"""Documents an export reads from the store at a time: a benchmark with its history is some
tens of kilobytes (some hundreds as Python objects), so a batch is a megabyte or two, whatever
the almanac's size, and 30 exports streaming at once hold some 50 MB."""


async def exported_lines(store: Store) -> AsyncIterator[Dataset]:
    """Everything stored, in the import format, as NDJSON's lines (what `dataset_lines` makes of
    a whole dataset), read from the store a batch at a time as they are taken: labs,
    categories, models by slug, then benchmarks, parents before tracks. Importing them into an
    empty store gives it back."""
    async for line in exported_head(store):
        yield line
    async for batch in store.documents_in_batches(Collection.BENCHMARKS, EXPORT_BATCH):
        for doc in batch:
            yield exported_benchmark(doc)


async def exported_head(store: Store) -> AsyncIterator[Dataset]:
    """`exported_lines` up to the benchmarks: the format, provenance and site figures, then the
    labs, categories and models (a release reads the benchmarks' documents itself, once for
    all its files, and makes their lines with `exported_benchmark`)."""
    yield {
        "format": FORMAT,
        "provenance": await store.provenance(),
        "site": await store.site_figures(),
    }
    exported: dict[Collection, Callable[[Any], dict[str, Any]]] = {
        Collection.LABS: dict,
        Collection.CATEGORIES: dict,
        Collection.MODELS: _exported_model,
    }
    for collection, export in exported.items():
        async for batch in store.documents_in_batches(collection, EXPORT_BATCH):
            for doc in batch:
                yield {collection.value: [export(doc)]}


def exported_benchmark(doc: BenchmarkDoc) -> Dataset:
    """A benchmark's line of `exported_lines`."""
    return {Collection.BENCHMARKS.value: [_exported_benchmark(doc)]}


async def write_export(store: Store, out: TextIO, *, ndjson: bool) -> int:
    """Everything stored, written to `out` as it is read: NDJSON (one item a line), or one
    JSON document (each item on a line of its own). The number of benchmarks written."""
    benchmarks, opened, first = 0, 0, True
    head = True

    def open_through(last: int) -> None:
        """Close the open section and open each up to `last`: a section with no item is []."""
        nonlocal opened, first
        while opened <= last:
            out.write(("\n]" if opened else "") + f',\n"{ITEMS[opened]}": [')
            opened, first = opened + 1, True

    async for line in exported_lines(store):
        if ndjson:
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
        elif head:  # format, provenance and site figures: the document's first fields
            out.write(json.dumps(line, ensure_ascii=False)[:-1])
        else:
            [(section, items)] = line.items()
            open_through(ITEMS.index(section))
            for item in items:
                out.write(("\n" if first else ",\n") + json.dumps(item, ensure_ascii=False))
                first = False
        head = False
        benchmarks += len(line.get("benchmarks", []))
    if not ndjson:
        open_through(len(ITEMS) - 1)
        out.write("\n]}\n")
    return benchmarks


async def export_dataset(store: Store) -> Dataset:
    """Everything stored, in the import format, as one dataset held whole (for small almanacs
    and checks; the export and `almanac export` write `exported_lines` as they come)."""
    dataset: Dataset = {section: [] for section in ITEMS}
    async for line in exported_lines(store):
        for key, value in line.items():
            if key in dataset:
                dataset[key].extend(value)
            else:
                dataset[key] = value
    return {key: dataset[key] for key in ("format", *SECTIONS)}


# The file holds what the write side takes (editing.inputs), field for field: its format is
# those declarations', and a field added there is exported and imported with no change here.
# Their names taken once (pydantic's `model_fields` is a property, asked for each entry).
MODEL_FIELDS = tuple(ModelFields.model_fields)
BENCHMARK_FIELDS = tuple(BenchmarkFields.model_fields)
SOURCE_FIELDS = tuple(SourceFields.model_fields)
READ_FIELDS = tuple(name for name in ReadFields.model_fields if name not in READ_REQUEST_ONLY)
ENTRY_FIELDS = tuple(EntryFields.model_fields)


def _exported_model(doc: ModelDoc) -> dict[str, Any]:
    return {
        "slug": doc["slug"],
        **{name: doc[name] for name in MODEL_FIELDS},  # type: ignore[literal-required]
        "lab": doc["lab"]["slug"] if doc["lab"] else None,
    }


def _exported_benchmark(doc: BenchmarkDoc) -> dict[str, Any]:
    source = doc["source"]
    lab = None if source is None else source.get("lab")
    return {
        "slug": doc["slug"],
        # A field added later is absent from older documents: exported empty.
        **{name: doc.get(name) for name in BENCHMARK_FIELDS},
        "made_by": doc["made_by"]["slug"] if doc["made_by"] else None,
        "category": doc["category"]["slug"],
        "source": None
        if source is None
        else {
            **{name: source.get(name) for name in SOURCE_FIELDS},
            "lab": None if lab is None else lab["slug"],
        },
        "reads": [
            {
                **{name: read[name] for name in READ_FIELDS},  # type: ignore[literal-required]
                "entries": [
                    {
                        name: entry.get(name)
                        for name in ENTRY_FIELDS
                        if name in entry or name not in OMITTED_WHEN_EMPTY
                    }
                    for entry in read["entries"]
                ],
            }
            for read in doc.get("history", [])
        ],
    }
