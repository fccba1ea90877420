"""Numbers you can trust, through HTTP: ties and rank ranges, intervals written through the API
and through an import, who reported each score, possible contamination, headroom."""

import csv
import io
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from editing.changes import Stamp
from editing.dataset import dataset_from_csv
from editing.importer import import_dataset
from store import Store
from tests.conftest import GraphQLClient, snapshot

GENERAL = "code-interpreter-benchmark-general"
GPT4 = "GPT-4 (snapshot unspecified)"

ROW = """
fragment Trust on LeaderboardRow {
  modelName score rank rankRange { best worst } tiedWithLeader
  interval { low high level computed } standardError sampleSize
  reportedBy selfReported releasedAfterTestSet
}"""
PAGE = (
    """
query($slug: String!, $kinds: [SourceKind!], $noSelf: Boolean! = false) {
  benchmark(slug: $slug) {
    leader { modelName }
    leaders(reportedBy: $kinds, excludeSelfReported: $noSelf) { ...Trust }
    trackedLeaders(reportedBy: $kinds, excludeSelfReported: $noSelf) { modelName }
    leaderboard(reportedBy: $kinds, excludeSelfReported: $noSelf) { ...Trust }
  }
}"""
    + ROW
)
RECORD = """
mutation($input: LeaderboardReadInput!) {
  recordLeaderboardRead(benchmark: "code-interpreter-benchmark-general", input: $input) {
    recorded
  }
}"""


def by_name(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {row["modelName"]: row for row in rows}


async def page(graphql: GraphQLClient, **variables: Any) -> dict[str, Any]:
    data = await graphql.data(PAGE, slug=GENERAL, **variables)
    benchmark: dict[str, Any] = data["benchmark"]
    return benchmark


async def record(admin: GraphQLClient, entries: list[dict[str, Any]]) -> None:
    read = {"readOn": "2026-11-20", "entries": entries, "allowRemovals": True}
    assert (await admin.data(RECORD, input=read))["recordLeaderboardRead"]["recorded"]


def row(name: str, score: float, **more: Any) -> dict[str, Any]:
    return {"modelName": name, "score": score, "setting": "v1", **more}


async def test_the_bundled_general_track_has_two_leaders(graphql: GraphQLClient) -> None:
    found = await page(graphql)
    assert found["leader"] == {"modelName": GPT4}  # unchanged: one row, by name on a tie
    assert [r["modelName"] for r in found["leaders"]] == [GPT4, "Qwen-72B-Chat"]
    tied = [r["modelName"] for r in found["leaderboard"] if r["tiedWithLeader"]]
    assert tied == ["Qwen-72B-Chat"]
    rows = by_name(found["leaderboard"])
    assert rows[GPT4]["rankRange"] == rows["Qwen-72B-Chat"]["rankRange"] == {"best": 1, "worst": 2}
    assert rows["GPT-3.5"]["rankRange"] == {"best": 3, "worst": 4}
    assert rows["Qwen-14B"]["rankRange"] == {"best": 6, "worst": 8}
    # No source publishes an interval or a sample size for these scores.
    assert {(r["interval"], r["standardError"], r["sampleSize"]) for r in rows.values()} == {
        (None, None, None)
    }
    assert [r["modelName"] for r in found["trackedLeaders"]] == ["Qwen-14B"]


async def test_who_reported_the_bundled_scores(graphql: GraphQLClient) -> None:
    rows = by_name((await page(graphql))["leaderboard"])
    assert {r["reportedBy"] for r in rows.values()} == {"BENCHMARK_MAINTAINER"}
    # Qwen maintains the leaderboard: its own model's score is self-reported.
    assert rows["Qwen-14B"]["selfReported"] is True
    assert rows["ChatGLM3-6B"]["selfReported"] is False
    assert rows[GPT4]["selfReported"] is None  # not a model we track: its lab is unknown
    parent = await graphql.data(
        '{ benchmark(slug: "code-interpreter-benchmark") { source { kind lab { slug } } '
        "leaderboard { modelName reportedBy selfReported } } }"
    )
    assert parent["benchmark"]["source"] == {"kind": "MODEL_DEVELOPER", "lab": {"slug": "qwen"}}
    report = by_name(parent["benchmark"]["leaderboard"])
    assert report["Qwen-14B"] == {
        "modelName": "Qwen-14B",
        "reportedBy": "MODEL_DEVELOPER",
        "selfReported": True,
    }


async def test_contamination_and_headroom_on_the_bundled_data(graphql: GraphQLClient) -> None:
    data = await graphql.data(
        f'{{ benchmark(slug: "{GENERAL}") {{ testSetPublishedOn releasedOn ceiling headroom '
        "nearCeiling taskCount leaderboard { modelName releasedAfterTestSet } } }"
    )
    benchmark = data["benchmark"]
    assert benchmark["testSetPublishedOn"] == benchmark["releasedOn"] == "2023-09"
    assert (benchmark["ceiling"], benchmark["headroom"], benchmark["nearCeiling"]) == (
        85.0,
        pytest.approx(2.2),
        False,
    )
    assert benchmark["taskCount"] == 58
    rows = by_name(benchmark["leaderboard"])
    assert rows["ChatGLM3-6B"]["releasedAfterTestSet"] is True  # 2023-10, after 2023-09
    assert rows["Qwen-14B"]["releasedAfterTestSet"] is None  # the same month: unknown
    assert rows[GPT4]["releasedAfterTestSet"] is None  # release month unknown


async def test_an_interval_written_through_the_api_makes_a_tie(
    graphql: GraphQLClient, admin: GraphQLClient
) -> None:
    await record(admin, [row(GPT4, 82.8), row("Qwen-72B-Chat", 80.0), row("GPT-3.5", 74.1)])
    before = await page(graphql)
    assert [r["modelName"] for r in before["leaders"]] == [GPT4]
    assert by_name(before["leaderboard"])[GPT4]["rankRange"] == {"best": 1, "worst": 1}

    interval = {"low": 78.0, "high": 83.0}  # level left out: 95%
    await record(
        admin,
        [row(GPT4, 82.8), row("Qwen-72B-Chat", 80.0, interval=interval), row("GPT-3.5", 74.1)],
    )
    after = await page(graphql)
    assert [r["modelName"] for r in after["leaders"]] == [GPT4, "Qwen-72B-Chat"]
    rows = by_name(after["leaderboard"])
    assert rows["Qwen-72B-Chat"]["interval"] == {**interval, "level": 0.95, "computed": False}
    assert rows["Qwen-72B-Chat"]["rankRange"] == {"best": 1, "worst": 2}
    assert rows["Qwen-72B-Chat"]["tiedWithLeader"] is True
    assert rows[GPT4]["rankRange"] == {"best": 1, "worst": 2}
    assert rows["GPT-3.5"]["rankRange"] == {"best": 3, "worst": 3}


async def test_a_sample_size_gives_a_computed_wilson_interval(
    graphql: GraphQLClient, admin: GraphQLClient
) -> None:
    await record(
        admin,
        [row(GPT4, 50.0, sampleSize=100), row("GPT-3.5", 58.0), row("Qwen-72B-Chat", 61.0)],
    )
    found = await page(graphql)
    gpt4 = by_name(found["leaderboard"])[GPT4]
    assert gpt4["sampleSize"] == 100
    assert gpt4["interval"] == {
        "low": pytest.approx(40.383, abs=1e-3),
        "high": pytest.approx(59.617, abs=1e-3),
        "level": 0.95,
        "computed": True,
    }
    # 59.6 reaches 58.0 but not 61.0: second at best, last at worst.
    assert gpt4["rankRange"] == {"best": 2, "worst": 3}
    assert [r["modelName"] for r in found["leaders"]] == ["Qwen-72B-Chat"]


async def test_a_standard_error_imported_from_a_file_changes_the_leaders(
    graphql: GraphQLClient, store: Store
) -> None:
    def read(*entries: dict[str, Any]) -> dict[str, Any]:
        return {"read_on": "2026-11-20", "entries": list(entries), "allow_removals": True}

    def entry(name: str, score: float, **more: Any) -> dict[str, Any]:
        return {"model_name": name, "score": score, "setting": "v1", **more}

    dataset = {
        "format": "benchmark-almanac/1",
        "benchmarks": [
            {
                "slug": GENERAL,
                "reads": [
                    read(
                        entry(GPT4, 82.8),
                        entry("Qwen-72B-Chat", 79.0, standard_error=2.0),
                        entry("GPT-3.5", 74.1),
                    )
                ],
            }
        ],
    }
    summary = await import_dataset(store, dataset, Stamp("test", datetime.now(UTC)))
    assert not summary.rejected, summary.rejected
    found = await page(graphql)
    qwen = by_name(found["leaderboard"])["Qwen-72B-Chat"]
    # 79.0 ± 1.959964 * 2.0 reaches 82.8.
    assert qwen["interval"] == {
        "low": pytest.approx(75.08007),
        "high": pytest.approx(82.91993),
        "level": 0.95,
        "computed": True,
    }
    assert qwen["rankRange"] == {"best": 1, "worst": 2}
    assert [r["modelName"] for r in found["leaders"]] == [GPT4, "Qwen-72B-Chat"]


async def test_an_interval_imported_from_csv_changes_the_rank_range(
    graphql: GraphQLClient, store: Store
) -> None:
    text = (
        "benchmark,read_on,model_name,setting,score,interval_low,interval_high,reported_by\n"
        f"{GENERAL},2026-11-20,{GPT4},v1,82.8,,,\n"
        f"{GENERAL},2026-11-20,GPT-3.5,v1,74.1,70.0,83.0,THIRD_PARTY\n"
    )
    dataset = dataset_from_csv(text)
    summary = await import_dataset(
        store, dataset, Stamp("test", datetime.now(UTC)), allow_removals=True
    )
    assert not summary.rejected, summary.rejected
    rows = by_name((await page(graphql))["leaderboard"])
    assert rows["GPT-3.5"]["interval"] == {
        "low": 70.0,
        "high": 83.0,
        "level": 0.95,
        "computed": False,
    }
    assert rows["GPT-3.5"]["reportedBy"] == "THIRD_PARTY"
    assert rows["GPT-3.5"]["rankRange"] == rows[GPT4]["rankRange"] == {"best": 1, "worst": 2}


async def test_filters_by_who_reported_the_score(
    graphql: GraphQLClient, admin: GraphQLClient
) -> None:
    await record(
        admin,
        [
            row(GPT4, 82.8),
            row("Qwen-72B-Chat", 82.8, reportedBy="THIRD_PARTY"),
            row("Qwen-14B-Chat", 90.0),  # on Qwen's own leaderboard: self-reported
            row("ChatGLM3-6B", 70.0, reportedBy="THIRD_PARTY"),
        ],
    )
    everything = await page(graphql)
    assert [r["modelName"] for r in everything["leaders"]] == ["Qwen-14B"]

    independent = await page(graphql, noSelf=True)
    assert [r["modelName"] for r in independent["leaderboard"]] == [
        GPT4,
        "Qwen-72B-Chat",
        "ChatGLM3-6B",
    ]
    assert [r["modelName"] for r in independent["leaders"]] == [GPT4, "Qwen-72B-Chat"]
    assert [r["modelName"] for r in independent["trackedLeaders"]] == ["ChatGLM3-6B"]

    third = await page(graphql, kinds=["THIRD_PARTY"])
    assert [(r["modelName"], r["rank"]) for r in third["leaderboard"]] == [
        ("Qwen-72B-Chat", 1),
        ("ChatGLM3-6B", 2),
    ]
    assert [r["modelName"] for r in third["leaders"]] == ["Qwen-72B-Chat"]
    assert third["leaders"][0]["tiedWithLeader"] is False  # the leader under this filter

    nobody = await page(graphql, kinds=["ALMANAC"])
    assert (nobody["leaderboard"], nobody["leaders"]) == ([], [])

    # The leaderboard's downloads take the same filter, as query parameters.
    http = graphql.http
    csv_rows = (await http.get(f"/benchmarks/{GENERAL}.csv?reportedBy=THIRD_PARTY")).text
    assert [line.split(",")[1] for line in csv_rows.splitlines()[1:]] == [
        "Qwen-72B-Chat",
        "ChatGLM3-6B",
    ]
    as_json = await http.get(f"/benchmarks/{GENERAL}.json?excludeSelfReported=true")
    assert [r["modelName"] for r in as_json.json()["leaderboard"]] == [
        r["modelName"] for r in independent["leaderboard"]
    ]
    unfiltered = await http.get(f"/benchmarks/{GENERAL}.json")
    assert len(unfiltered.json()["leaderboard"]) == len(everything["leaderboard"])
    for bad in ("reportedBy=SOMEONE", "excludeSelfReported=maybe"):
        refused = await http.get(f"/benchmarks/{GENERAL}.csv?{bad}")
        assert refused.status_code == 400
        assert refused.json()["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
        assert refused.json()["extensions"]["cost"]["requestedQueryCost"] == 1


async def test_model_standings_say_who_could_lead(
    graphql: GraphQLClient, admin: GraphQLClient
) -> None:
    await record(admin, [row(GPT4, 70.0), row("Qwen-14B-Chat", 70.0), row("ChatGLM3-6B", 60.0)])
    data = await graphql.data(
        '{ model(slug: "qwen-14b") { standings(first: 10) { nodes { benchmark { slug } '
        "rank leads leadsTrackedModels couldLead couldLeadTrackedModels "
        "row { rankRange { best worst } selfReported } } } } }"
    )
    [general] = [
        node for node in data["model"]["standings"]["nodes"] if node["benchmark"]["slug"] == GENERAL
    ]
    assert general == {
        "benchmark": {"slug": GENERAL},
        "rank": 2,
        "leads": False,  # GPT-4 is first by name
        "leadsTrackedModels": True,
        "couldLead": True,
        "couldLeadTrackedModels": True,
        "row": {"rankRange": {"best": 1, "worst": 2}, "selfReported": True},
    }


@pytest.mark.parametrize(
    ("entry", "field", "message"),
    [
        (
            row(GPT4, 82.8, interval={"low": 83.0, "high": 90.0}),
            "input.entries[0].interval",
            "does not hold",
        ),
        (
            row(GPT4, 82.8, interval={"low": 85.0, "high": 80.0}),
            "input.entries[0].interval",
            "above",
        ),
        (
            row(GPT4, 82.8, interval={"low": 80.0, "high": 101.0}),
            "input.entries[0].interval.high",
            "outside 0-100",
        ),
        (
            row(GPT4, 82.8, interval={"low": 80.0, "high": 85.0, "level": 1.5}),
            "input.entries[0].interval.level",
            "less than 1",
        ),
        (row(GPT4, 82.8, standardError=-1.0), "input.entries[0].standardError", "greater"),
        (row(GPT4, 82.8, sampleSize=0), "input.entries[0].sampleSize", "greater"),
    ],
)
async def test_bad_uncertainty_is_refused_by_field(
    admin: GraphQLClient, store: Store, entry: dict[str, Any], field: str, message: str
) -> None:
    before = await snapshot(store)
    read = {"readOn": "2026-11-20", "entries": [entry], "allowRemovals": True}
    body = await admin(RECORD, input=read)
    [error] = body["errors"]
    assert error["extensions"]["code"] == "BAD_USER_INPUT", error
    assert error["extensions"]["field"] == field, error
    assert message in error["message"], error
    assert await snapshot(store) == before


async def test_a_source_lab_must_be_known(admin: GraphQLClient, store: Store) -> None:
    before = await snapshot(store)
    body = await admin(
        "mutation($input: BenchmarkInput!) { updateBenchmark(slug: "
        f'"{GENERAL}", input: $input) {{ revision }} }}',
        input={"source": {"name": "A report", "kind": "MODEL_DEVELOPER", "lab": "nobody"}},
    )
    [error] = body["errors"]
    assert error["extensions"]["field"] == "input.source.lab", error
    assert await snapshot(store) == before


async def test_the_downloads_carry_the_new_columns(
    client: httpx.AsyncClient, admin: GraphQLClient
) -> None:
    await record(
        admin,
        [
            row(GPT4, 82.8),
            row("Qwen-72B-Chat", 80.0, interval={"low": 78.0, "high": 83.0, "level": 0.9}),
            row("Qwen-14B-Chat", 60.0, standardError=1.5, sampleSize=58),
        ],
    )
    response = await client.get(f"/benchmarks/{GENERAL}.csv")
    header, *_ = response.text.splitlines()
    assert header.startswith("rank,model,listed_as,tracked,score,setting,source,published_on,")
    assert header.endswith(
        ",read_on,interval_low,interval_high,interval_level,interval_computed,standard_error,"
        "sample_size,rank_best,rank_worst,source_kind,self_reported,released_after_test_set"
    )
    rows = {line["model"]: line for line in csv.DictReader(io.StringIO(response.text))}
    qwen72 = rows["Qwen-72B-Chat"]
    assert [qwen72[c] for c in ("interval_low", "interval_high", "interval_level")] == [
        "78.0",
        "83.0",
        "0.9",
    ]
    assert (qwen72["interval_computed"], qwen72["rank_best"], qwen72["rank_worst"]) == (
        "false",
        "1",
        "2",
    )
    assert (qwen72["source_kind"], qwen72["self_reported"]) == ("BENCHMARK_MAINTAINER", "")
    qwen14 = rows["Qwen-14B"]
    assert (qwen14["standard_error"], qwen14["sample_size"], qwen14["interval_computed"]) == (
        "1.5",
        "58",
        "true",
    )
    assert (qwen14["self_reported"], qwen14["released_after_test_set"]) == ("true", "")
    gpt4 = rows[GPT4]
    assert (gpt4["interval_low"], gpt4["interval_computed"], gpt4["sample_size"]) == ("", "", "")

    downloaded = (await client.get(f"/benchmarks/{GENERAL}.json")).json()
    leaderboard = by_name(downloaded["leaderboard"])
    assert leaderboard["Qwen-72B-Chat"]["interval"] == {
        "low": 78.0,
        "high": 83.0,
        "level": 0.9,
        "computed": False,
    }
    assert leaderboard["Qwen-72B-Chat"]["rankRange"] == {"best": 1, "worst": 2}
    assert leaderboard["Qwen-14B"]["selfReported"] is True

    standings = await client.get("/models/qwen-14b.csv")
    lines = list(csv.DictReader(io.StringIO(standings.text)))
    assert list(lines[0])[-13:] == [
        "interval_low",
        "interval_high",
        "interval_level",
        "interval_computed",
        "standard_error",
        "sample_size",
        "rank_best",
        "rank_worst",
        "source_kind",
        "self_reported",
        "released_after_test_set",
        "could_lead",
        "could_lead_tracked_models",
    ]
    [general] = [line for line in lines if line["benchmark"] == GENERAL]
    assert (general["standard_error"], general["could_lead"], general["self_reported"]) == (
        "1.5",
        "false",
        "true",
    )


async def test_the_catalog_names_every_row_that_could_lead(graphql: GraphQLClient) -> None:
    data = await graphql.data(
        '{ benchmarks(first: 20, filter: {search: "interpreter"}) { nodes { slug '
        "leader { modelName } leaders { modelName } trackedLeaders { modelName } } } }"
    )
    nodes = {node["slug"]: node for node in data["benchmarks"]["nodes"]}
    general = nodes[GENERAL]
    assert general["leader"] == {"modelName": GPT4}
    assert general["leaders"] == [{"modelName": GPT4}, {"modelName": "Qwen-72B-Chat"}]
    assert general["trackedLeaders"] == [{"modelName": "Qwen-14B"}]
    # Without a tie, the leaders are the leader alone.
    math = nodes["code-interpreter-benchmark-math"]
    assert math["leaders"] == [math["leader"]]
