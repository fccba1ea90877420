"""Downloads of exactly what a page shows, with the same rules as the page's own query, an ETag,
and a charge like the API's."""

import csv
import io
import json
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from editing import export_dataset
from editing.changes import Stamp
from editing.dataset import dataset_from_lines, read_dataset
from editing.importer import import_dataset
from server.app import create_app
from server.settings import Settings
from store import Store
from tests.conftest import GraphQLClient, empty_store, http_client
from tests.http.reads.test_leaderboard_reads import GENERAL, record, row

PAGE = """
query($slug: String!) {
  benchmark(slug: $slug) {
    scoresRefreshedOn
    leaderboard {
      rank modelName listedAs tracked score setting source publishedOn note
      ...Trust
    }
  }
}
fragment Trust on LeaderboardRow {
  interval { low high level computed } standardError sampleSize
  rankRange { best worst } reportedBy selfReported releasedAfterTestSet
}"""
STANDINGS = """
query($slug: String!) {
  model(slug: $slug) {
    standings(first: 100) {
      nodes {
        rank score setting leads leadsTrackedModels benchmark { slug name scoresRefreshedOn }
        couldLead couldLeadTrackedModels row { ...Trust }
      }
    }
  }
}
fragment Trust on LeaderboardRow {
  interval { low high level computed } standardError sampleSize
  rankRange { best worst } reportedBy selfReported releasedAfterTestSet
}"""


@pytest.fixture
def settings() -> Settings:
    """A budget that barely refills: what a download is charged is read off what is left."""
    return Settings(anonymous_restore_rate=0.001)


def trust_cells(line: dict[str, Any]) -> dict[str, str]:
    """The columns appended for how sure the score is and who reported it."""
    interval = line["interval"] or {}
    return {
        "interval_low": cell(interval.get("low")),
        "interval_high": cell(interval.get("high")),
        "interval_level": cell(interval.get("level")),
        "interval_computed": cell(interval.get("computed")),
        "standard_error": cell(line["standardError"]),
        "sample_size": cell(line["sampleSize"]),
        "rank_best": cell(line["rankRange"]["best"]),
        "rank_worst": cell(line["rankRange"]["worst"]),
        "source_kind": cell(line["reportedBy"]),
        "self_reported": cell(line["selfReported"]),
        "released_after_test_set": cell(line["releasedAfterTestSet"]),
    }


def rows_of(response: httpx.Response) -> list[dict[str, str]]:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "text/csv; charset=utf-8"
    return list(csv.DictReader(io.StringIO(response.text)))


def cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


async def test_the_leaderboard_csv_is_the_pages_leaderboard(
    client: httpx.AsyncClient, graphql: GraphQLClient
) -> None:
    page = (await graphql(PAGE, slug=GENERAL))["data"]["benchmark"]
    rows = rows_of(await client.get(f"/benchmarks/{GENERAL}.csv"))
    assert rows == [
        {
            "rank": cell(line["rank"]),
            "model": line["modelName"],
            "listed_as": line["listedAs"],
            "tracked": cell(line["tracked"]),
            "score": cell(line["score"]),
            "setting": cell(line["setting"]),
            "source": cell(line["source"]),
            "published_on": cell(line["publishedOn"]),
            "note": cell(line["note"]),
            "read_on": page["scoresRefreshedOn"],
            **trust_cells(line),
        }
        for line in page["leaderboard"]
    ]
    # A tracked model shows the almanac's name, and the name the source printed beside it.
    qwen = next(row for row in rows if row["model"] == "Qwen-14B")
    assert (qwen["listed_as"], qwen["tracked"]) == ("Qwen-14B-Chat", "true")


async def test_the_leaderboard_json_is_the_pages_leaderboard(
    client: httpx.AsyncClient, graphql: GraphQLClient
) -> None:
    page = (await graphql(PAGE, slug=GENERAL))["data"]["benchmark"]
    download = await client.get(f"/benchmarks/{GENERAL}.json")
    assert download.headers["content-type"] == "application/json"
    assert download.headers["content-disposition"] == f'attachment; filename="{GENERAL}.json"'
    body = download.json()
    assert body["slug"] == GENERAL
    assert body["leaderboard"] == page["leaderboard"]
    assert body["scoresRefreshedOn"] == page["scoresRefreshedOn"]


async def test_a_models_csv_is_its_standings(
    client: httpx.AsyncClient, graphql: GraphQLClient
) -> None:
    nodes = (await graphql(STANDINGS, slug="qwen-14b"))["data"]["model"]["standings"]["nodes"]
    rows = rows_of(await client.get("/models/qwen-14b.csv"))
    assert len(rows) == len(nodes) > 1
    assert rows == [
        {
            "benchmark": node["benchmark"]["slug"],
            "benchmark_name": node["benchmark"]["name"],
            "rank": cell(node["rank"]),
            "score": cell(node["score"]),
            "setting": cell(node["setting"]),
            "leads": cell(node["leads"]),
            "leads_tracked_models": cell(node["leadsTrackedModels"]),
            "read_on": node["benchmark"]["scoresRefreshedOn"],
            **trust_cells(node["row"]),
            "could_lead": cell(node["couldLead"]),
            "could_lead_tracked_models": cell(node["couldLeadTrackedModels"]),
        }
        for node in nodes
    ]


async def test_an_etag_until_the_data_changes(
    client: httpx.AsyncClient, admin: GraphQLClient
) -> None:
    first = await client.get(f"/benchmarks/{GENERAL}.csv")
    etag = first.headers["etag"]
    same = await client.get(f"/benchmarks/{GENERAL}.csv", headers={"If-None-Match": etag})
    assert same.status_code == 304
    assert same.content == b""
    await record(admin, "2026-11-20", [row("Qwen-14B-Chat", 61.0)])
    changed = await client.get(f"/benchmarks/{GENERAL}.csv", headers={"If-None-Match": etag})
    assert changed.status_code == 200
    assert changed.headers["etag"] != etag
    assert [r["listed_as"] for r in rows_of(changed)] == ["Qwen-14B-Chat"]


async def test_a_download_is_charged_what_its_query_costs(client: httpx.AsyncClient) -> None:
    first = await client.get(f"/benchmarks/{GENERAL}.json")
    rows = len(first.json()["leaderboard"])
    # The benchmark, its metric, and each row with its interval and its rank range.
    assert first.headers["almanac-cost"] == str(2 + 3 * rows)
    kept = await client.get(f"/benchmarks/{GENERAL}.json")  # made once, paid for each time
    assert kept.headers["almanac-cost"] == str(2 + 3 * rows)
    assert kept.content == first.content


async def test_a_download_the_client_holds_costs_the_minimum(client: httpx.AsyncClient) -> None:
    first = await client.get(f"/benchmarks/{GENERAL}.csv")
    assert int(first.headers["almanac-cost"]) > 1
    held = await client.get(
        f"/benchmarks/{GENERAL}.csv", headers={"If-None-Match": first.headers["etag"]}
    )
    assert held.status_code == 304
    assert held.headers["almanac-cost"] == "1"


async def test_a_throttled_download_is_refused_before_it_is_made(
    store: Store, calls: Counter[str]
) -> None:
    app = create_app(
        Settings(max_query_cost=50, anonymous_bucket_capacity=50, anonymous_restore_rate=0.001),
        store,
    )
    async with http_client(app) as http:
        while (await http.get("/models/qwen-14b.csv")).status_code == 200:
            pass  # spends the budget
        calls.clear()
        throttled = await http.get(f"/benchmarks/{GENERAL}.csv")
        held_back = await http.get("/models/qwen-14b.csv")
    await app.services.shared.budgets.close()
    assert throttled.status_code == held_back.status_code == 429
    assert throttled.json()["errors"][0]["extensions"]["code"] == "THROTTLED"
    assert throttled.headers["almanac-cost"] == "0"  # what it was charged: nothing
    # Priced by an indexed count; nothing read, run or rendered (the kept one not even counted).
    assert calls == {"leaderboard_size": 1}


async def test_unknown_downloads_are_graphql_shaped_404s(client: httpx.AsyncClient) -> None:
    for path in ("/benchmarks/nope.csv", f"/benchmarks/{GENERAL}.xml", "/models/nope.csv"):
        response = await client.get(path)
        assert response.status_code == 404
        assert response.json()["errors"][0]["extensions"]["code"] == "NOT_FOUND"
        assert response.json()["extensions"]["cost"]["requestedQueryCost"] == 1


async def test_a_spent_budget_throttles_downloads_too(store: Store) -> None:
    app = create_app(
        Settings(max_query_cost=50, anonymous_bucket_capacity=50, anonymous_restore_rate=0.001),
        store,
    )
    async with http_client(app) as http:
        statuses = [(await http.get(f"/benchmarks/{GENERAL}.csv")).status_code for _ in range(5)]
        throttled = await http.get(f"/benchmarks/{GENERAL}.csv")
    await app.services.shared.budgets.close()
    assert statuses[0] == 200
    assert throttled.status_code == 429
    assert throttled.json()["errors"][0]["extensions"]["code"] == "THROTTLED"
    assert int(throttled.headers["retry-after"]) > 0


async def test_the_whole_dataset_streams_as_ndjson_in_the_import_format(
    client: httpx.AsyncClient, store: Store, tmp_path: Path
) -> None:
    response = await client.get("/export.ndjson")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/x-ndjson"
    lines = response.text.splitlines()
    assert json.loads(lines[0])["format"] == "benchmark-almanac/1"
    exported = await export_dataset(store)
    items = sum(len(exported[s]) for s in ("labs", "categories", "models", "benchmarks"))
    assert len(lines) == 1 + items  # one item a line
    assert dataset_from_lines(response.text) == exported
    # It imports as any file does: into an empty store, it gives the same almanac.
    path = tmp_path / "almanac.ndjson"
    path.write_text(response.text, encoding="utf-8")
    fresh = await empty_store("sqlite", tmp_path / "fresh")
    await import_dataset(fresh, read_dataset(path), Stamp("test", datetime.now(UTC)))
    assert await export_dataset(fresh) == exported
    await fresh.close()


async def test_the_export_is_charged_per_item_and_revalidates(
    client: httpx.AsyncClient, store: Store
) -> None:
    first = await client.get("/export.ndjson")
    items = len(first.text.splitlines()) - 1
    assert first.headers["almanac-cost"] == str(1 + items)
    second = await client.get("/export.ndjson", headers={"If-None-Match": first.headers["etag"]})
    assert second.status_code == 304
    assert second.headers["almanac-cost"] == "1"  # a 304 costs the minimum
