"""What a release is rendered as, beside its stored files: its Croissant descriptor, its
citation (BibTeX, CITATION.cff), and a leaderboard as of the release as a table for a paper
(Markdown, LaTeX). The formats are releases.croissant's, .citation's and .tables'; here, only
which name gives which, and a table read back from the release's own files."""

import csv
import io
import json
import re
from dataclasses import dataclass
from typing import Any

from releases import citation, croissant, tables
from releases.content import StoredRelease
from releases.leaderboards import csv_text
from releases.manifest import ReleaseFile
from releases.reading import file_chunks, file_of, released_benchmark
from store import Store

TABLE = re.compile(r"benchmarks/(?P<slug>[^/]+)\.(?P<format>md|tex)")
CROISSANT = "croissant.json"
BIBTEX = "citation.bib"
CFF = "CITATION.cff"
RENDERED_NAMES = (CROISSANT, BIBTEX, CFF)


@dataclass(frozen=True)
class Site:
    """What a rendering names: where the API is, what the almanac is called, and the license
    its data is published under (None: not said, so no Croissant descriptor)."""

    base_url: str
    name: str
    license_url: str | None


@dataclass(frozen=True)
class Rendered:
    content: bytes
    media_type: str


def is_rendered(name: str) -> bool:
    return name in RENDERED_NAMES or TABLE.fullmatch(name) is not None


def rendering_source(stored: StoredRelease, name: str, site: Site) -> ReleaseFile:
    """The stored file a rendering is made from (what it is priced as): a table's leaderboard
    CSV, else the manifest. `LookupError` if the rendering cannot be made: a benchmark the
    release does not hold, or a Croissant descriptor without a license to name."""
    release = stored.release
    if (table := TABLE.fullmatch(name)) is not None:
        found = file_of(stored, f"benchmarks/{table['slug']}.csv")
        if found is None:
            raise LookupError(f"Release {release.id} holds no benchmark {table['slug']!r}.")
        return found
    if name == CROISSANT and site.license_url is None:
        raise LookupError(
            "No license is configured for the almanac's data (ALMANAC_RELEASE_LICENSE_URL): "
            "a Croissant descriptor must name one."
        )
    if name not in RENDERED_NAMES:
        raise LookupError(f"Release {release.id} has no rendering {name!r}.")
    return stored.manifest


async def rendered(store: Store, stored: StoredRelease, name: str, site: Site) -> Rendered:
    """The rendering `name` of the release (`is_rendered`); `LookupError` as
    `rendering_source`."""
    release = stored.release
    rendering_source(stored, name, site)
    if name == CROISSANT and site.license_url is not None:
        descriptor = croissant.descriptor(release, site.base_url, site.license_url, site.name)
        return Rendered(json.dumps(descriptor, indent=2).encode(), "application/ld+json")
    if name == BIBTEX:
        bibtex = citation.bibtex(release, site.base_url, site.name)
        return Rendered(bibtex.encode(), "application/x-bibtex; charset=utf-8")
    if name == CFF:
        cff = citation.cff(release, site.base_url, site.name)
        return Rendered(cff.encode(), "application/yaml; charset=utf-8")
    if (table := TABLE.fullmatch(name)) is not None:
        found = await release_table(store, stored, table["slug"])
        if found is None:
            raise LookupError(f"Release {release.id} holds no benchmark {table['slug']!r}.")
        if table["format"] == "md":
            return Rendered(
                tables.markdown(release, found).encode(), "text/markdown; charset=utf-8"
            )
        return Rendered(tables.latex(release, found).encode(), "application/x-tex; charset=utf-8")
    raise LookupError(f"Release {release.id} has no rendering {name!r}.")


async def release_table(
    store: Store, stored: StoredRelease, slug: str
) -> tables.BenchmarkTable | None:
    """The benchmark's leaderboard as the release holds it (`tables.table_of` of the page's
    query's answer, read back from the release's files: the rows from its CSV, the name and
    metric from its NDJSON); None if the release does not hold it."""
    name = f"benchmarks/{slug}.csv"
    if file_of(stored, name) is None:
        return None
    benchmark = await released_benchmark(store, stored, slug)
    if benchmark is None:
        return None
    data = b"".join([chunk async for chunk in await file_chunks(store, stored, name)])
    metric = benchmark["metric"]
    answer = {
        "slug": slug,
        "name": benchmark["name"],
        "metric": {
            "name": metric["name"],
            "unit": metric["unit"],
            "higherIsBetter": metric["higher_is_better"],
        },
        "leaderboard": [_row(line) for line in csv.DictReader(io.StringIO(data.decode()))],
    }
    return tables.table_of(answer)


def _row(line: dict[str, str]) -> dict[str, Any]:
    """A CSV line as the `LEADERBOARD` query's row has it (the fields a table shows)."""
    low, high = line["interval_low"], line["interval_high"]
    return {
        "rankRange": {"best": int(line["rank_best"]), "worst": int(line["rank_worst"])},
        "modelName": csv_text(line["model"]),
        "score": float(line["score"]),
        "interval": {"low": float(low), "high": float(high)} if low and high else None,
        "reportedBy": line["source_kind"] or None,
        "selfReported": line["self_reported"] == "true",
    }
