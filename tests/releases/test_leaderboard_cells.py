"""A release writes its leaderboards straight from the documents by the rules the page's types
call (releases.board_lines), not by running the page's query: every kind of cell is still the
download's (which runs it), byte for byte, on both stores. The bundled data has no interval,
no formula-like text and no entry of its own reporter: here a leaderboard has each."""

import csv
import io
from typing import Any

import httpx

from releases import make_release
from schema import encode_change_cursor
from schema.releases import leaderboard_reader
from store import Store
from store.queries import Collection

SLUG = "code-interpreter-benchmark-general"  # PERCENT, its maintainer's leaderboard
# Added to the stored entries, one each: a published interval, a standard error (the interval
# computed from it), a sample size (Wilson's, for a percentage), text a spreadsheet would run,
# a reporter of the row's own (independent, or the model's maker), a negative score, and text
# the CSV must quote (a comma, a quote, a line break, a carriage return).
CHANGES: list[dict[str, Any]] = [
    {"interval": {"low": 80.0, "high": 85.5, "level": 0.9}},
    {"standard_error": 1.25, "sample_size": 500},
    {"sample_size": 300},
    {"setting": "\t=1+1", "note": "=SUM(A1)", "source": "+cmd", "reported_by": "THIRD_PARTY"},
    {"reported_by": "MODEL_DEVELOPER", "note": "-2+3"},
    {"score": -1.5, "note": "@SUM(1+1)"},
    {
        "model_name": 'Model, "quoted"',
        "note": 'with, a comma and "quotes"',
        "setting": "two\nlines",
    },
    {"source": "a\rcarriage return", "note": '"', "setting": "=a,b"},
]


async def test_every_kind_of_cell_is_the_downloads(store: Store, client: httpx.AsyncClient) -> None:
    [benchmark] = await store.benchmarks_by_slugs([SLUG])
    entries = [
        {**entry, **change} for entry, change in zip(benchmark["entries"], CHANGES, strict=False)
    ] + benchmark["entries"][len(CHANGES) :]
    changed = {**benchmark, "entries": entries}
    assert await store.replace_at_revision(
        Collection.BENCHMARKS, SLUG, benchmark["revision"], changed
    )

    stored, _ = await make_release(store, "Cells", leaderboard_reader(store), encode_change_cursor)
    name = f"benchmarks/{SLUG}.csv"
    released = await client.get(f"/releases/{stored.release.id}/{name}")
    download = await client.get(f"/{name}")
    assert released.status_code == download.status_code == 200
    assert released.content == download.content

    rows = list(csv.DictReader(io.StringIO(released.text)))
    assert {row["interval_computed"] for row in rows} == {"true", "false", ""}
    assert {row["self_reported"] for row in rows} >= {"false", ""}
    assert {row["source_kind"] for row in rows} == {
        "THIRD_PARTY",
        "MODEL_DEVELOPER",
        "BENCHMARK_MAINTAINER",
    }
    notes = {row["note"] for row in rows}
    assert {"'=SUM(A1)", "'-2+3", "'@SUM(1+1)"} <= notes
    assert "-1.5" in {row["score"] for row in rows}  # a number, not neutralised
    assert "'\t=1+1" in {row["setting"] for row in rows}
    assert {"two\nlines", "'=a,b"} <= {row["setting"] for row in rows}
    assert {'with, a comma and "quotes"', '"'} <= notes
    assert 'Model, "quoted"' in {row["model"] for row in rows}
    assert "a\rcarriage return" in {row["source"] for row in rows}
