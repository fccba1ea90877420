"""Which benchmark a tool's task or evaluation name is: `--benchmark` (one for the whole file), a
`--map` file (a two-column CSV: the name in the file, the benchmark's slug; an empty slug or `-`
leaves the name out), or the benchmark's own slug, name or listed aliases."""

import csv
import io
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from interchange.results import FileRefused, as_text, file_bytes
from interchange.units import Unit
from store import BenchmarkDoc, Collection, Store

LEFT_OUT = ""
"""A mapping's slug for a name the import leaves out."""
MAP_HEADERS = {"benchmark", "slug", "benchmark_slug"}


@dataclass(frozen=True)
class Target:
    slug: str
    name: str
    unit: Unit
    higher_is_better: bool


def _key(name: str) -> str:
    return name.strip().casefold()


def _slugged(name: str) -> str:
    """`MMLU_Pro (5-shot)` as a slug would write it: `mmlu-pro-5-shot`."""
    return re.sub(r"[^a-z0-9]+", "-", name.casefold()).strip("-")


@dataclass
class Catalog:
    """The benchmarks a name may match: by slug, and by the key of each name and alias."""

    by_slug: dict[str, Target] = field(default_factory=dict)
    by_name: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    async def of(cls, store: Store) -> "Catalog":
        catalog = cls()
        async for batch in store.documents_in_batches(Collection.BENCHMARKS, 50):
            for doc in batch:
                catalog.add(doc)
        return catalog

    def add(self, doc: BenchmarkDoc) -> None:
        metric = doc["metric"]
        unit = Unit(metric["unit"], doc.get("ceiling"))
        self.by_slug[doc["slug"]] = Target(
            doc["slug"], doc["name"], unit, metric["higher_is_better"]
        )
        fields: dict[str, Any] = dict(doc)
        aliases: list[str] = fields.get("aliases") or []  # where benchmarks list aliases
        for name in (doc["name"], *aliases):
            slugs = self.by_name.setdefault(_key(name), [])
            if doc["slug"] not in slugs:
                slugs.append(doc["slug"])

    def own(self, task: str) -> str | None:
        """The benchmark whose slug, name or alias `task` is (None: none, or several)."""
        if task in self.by_slug:
            return task
        named = self.by_name.get(_key(task), [])
        if len(named) == 1:
            return named[0]
        slugged = _slugged(task)
        return slugged if not named and slugged in self.by_slug else None


@dataclass(frozen=True)
class Matcher:
    catalog: Catalog
    benchmark: str | None = None
    mapping: dict[str, str] = field(default_factory=dict)

    def slug(self, task: str) -> str | None:
        """The benchmark's slug, LEFT_OUT if the mapping leaves the name out, None if none."""
        if self.benchmark is not None:
            return self.benchmark
        if task in self.mapping:
            return self.mapping[task]
        if _key(task) in self.mapping:
            return self.mapping[_key(task)]
        return self.catalog.own(task)


def read_mapping(path: Path, catalog: Catalog) -> dict[str, str]:
    """A `--map` file: name -> slug (or LEFT_OUT), each slug a known benchmark's."""
    data, _ = file_bytes(path)
    rows = list(csv.reader(io.StringIO(as_text(path, data))))
    mapping: dict[str, str] = {}
    for number, row in enumerate(rows, start=1):
        if not row or not any(cell.strip() for cell in row):
            continue
        if number == 1 and len(row) == 2 and row[1].strip().casefold() in MAP_HEADERS:
            continue
        if len(row) != 2:
            raise FileRefused(
                path,
                f"line {number}",
                f"expected 2 columns (name, benchmark slug), found {len(row)}",
            )
        name, slug = row[0].strip(), row[1].strip()
        slug = LEFT_OUT if slug == "-" else slug
        if slug and slug not in catalog.by_slug:
            raise FileRefused(path, f"line {number}", f"no benchmark has the slug {slug!r}")
        mapping[name] = slug
        mapping.setdefault(_key(name), slug)
    return mapping
