"""The frontend's contract request returns every value page-spec.md expects."""

from pathlib import Path
from typing import Any

import pytest
from graphql import FieldNode, SelectionSetNode, TypeInfo, TypeInfoVisitor, Visitor, parse, visit
from graphql.type import get_named_type

from schema import schema
from schema.extensions.metering import published_types
from tests.conftest import GraphQLClient

CONTRACT = Path(__file__).parents[3] / "contract" / "benchmark-page.graphql"

GENERAL = "code-interpreter-benchmark-general"


@pytest.fixture
async def page(graphql: GraphQLClient) -> dict[str, Any]:
    return await graphql.data(CONTRACT.read_text(encoding="utf-8"), slug=GENERAL)


def without_id(selected: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in selected.items() if name != "id"}


def test_contract_file_is_found() -> None:
    assert CONTRACT.is_file(), f"the contract request is read from {CONTRACT}"


async def test_stored_facts(page: dict[str, Any]) -> None:
    benchmark = page["benchmark"]
    assert benchmark["slug"] == GENERAL
    assert benchmark["name"] == "Code Interpreter Benchmark General"
    assert benchmark["description"] == (
        "Models use a Python interpreter for general tasks. "
        "The score is the percentage of generated programs that execute."
    )
    assert benchmark["metric"] == {
        "name": "Executable rate",
        "unit": "PERCENT",
        "higherIsBetter": True,
    }
    assert benchmark["madeBy"] == {"slug": "qwen", "name": "Qwen"}
    assert benchmark["releasedOn"] == "2023-09"
    assert (
        benchmark["kind"],
        benchmark["level"],
        benchmark["scoring"],
        benchmark["answerFormat"],
        benchmark["taskAvailability"],
        benchmark["status"],
    ) == (
        "FUNCTION_CALLING",
        "SCHOOL",
        "CHECKED_AUTOMATICALLY",
        "AGENT_TASK",
        "ALL_PUBLIC",
        "IN_USE",
    )
    assert benchmark["category"]["name"] == "Tool use"
    assert benchmark["ceiling"] == 85.0
    assert benchmark["source"]["name"] == "Official Code Interpreter Benchmark General leaderboard"
    assert benchmark["scoresRefreshedOn"] == "2026-11-12"
    assert benchmark["modelCardReports"] == {"totalCount": 0}
    assert page["modelCardCoverage"] == {"launchPostsRead": 522, "labsRead": 52}


async def test_family(page: dict[str, Any]) -> None:
    benchmark = page["benchmark"]
    assert without_id(benchmark["parent"]) == {
        "slug": "code-interpreter-benchmark",
        "name": "Code Interpreter Benchmark",
        "note": "The Code Interpreter Benchmark record keeps lab scores that combine tracks.",
    }
    assert [track["name"] for track in benchmark["tracks"]] == [
        "Code Interpreter Benchmark Math",
        "Code Interpreter Benchmark Visualization-Hard",
        "Code Interpreter Benchmark Visualization-Easy",
        "Code Interpreter Benchmark General",
    ]


async def test_leaders_and_counts(page: dict[str, Any]) -> None:
    benchmark = page["benchmark"]
    leader, tracked_leader = benchmark["leader"], benchmark["trackedLeader"]
    assert (leader["modelName"], leader["score"], leader["tracked"]) == (
        "GPT-4 (snapshot unspecified)",
        82.8,
        False,
    )
    assert (tracked_leader["modelName"], tracked_leader["score"], tracked_leader["tracked"]) == (
        "Qwen-14B",
        65.5,
        True,
    )
    assert tracked_leader["model"]["slug"] == "qwen-14b"
    assert benchmark["entryCount"] == 10
    assert benchmark["trackedModelCount"] == 2
    assert without_id(benchmark["strongestModelTested"]) == {
        "name": "Qwen-14B",
        "capabilityIndexRank": 213,
    }
    assert without_id(benchmark["lastModelAdded"]) == {
        "name": "ChatGLM3-6B",
        "releasedOn": "2023-10",
    }


async def test_leaderboard_rows(page: dict[str, Any]) -> None:
    rows = page["benchmark"]["leaderboard"]
    assert [(row["rank"], row["modelName"], row["score"]) for row in rows] == [
        (1, "GPT-4 (snapshot unspecified)", 82.8),
        (2, "Qwen-72B-Chat", 82.8),
        (3, "CodeLLaMA-13B-Instruct", 74.1),
        (4, "GPT-3.5", 74.1),
        (5, "Qwen-7B-Chat", 67.2),
        (6, "InternLM-20B-Chat", 65.5),
        (7, "Qwen-1.8B-Chat", 65.5),
        (8, "Qwen-14B", 65.5),
        (9, "ChatGLM3-6B", 62.1),
        (10, "LLaMA2-13B-Chat", 48.3),
    ]
    assert {row["setting"] for row in rows} == {"version 20231206"}
    assert {row["source"] for row in rows} == {"Official leaderboard"}
    tracked = {row["modelName"]: without_id(row["model"]) for row in rows if row["tracked"]}
    assert tracked == {
        "Qwen-14B": {"slug": "qwen-14b", "name": "Qwen-14B", "releasedOn": "2023-09"},
        "ChatGLM3-6B": {"slug": "chatglm3-6b", "name": "ChatGLM3-6B", "releasedOn": "2023-10"},
    }
    assert all(row["model"] is None for row in rows if not row["tracked"])


async def test_scores_over_time(page: dict[str, Any]) -> None:
    points = page["benchmark"]["scoresOverTime"]
    assert len(points) == 10
    assert {point["date"] for point in points} == {"2023-12-06"}
    assert sorted(p["modelName"] for p in points if p["tracked"]) == ["ChatGLM3-6B", "Qwen-14B"]
    by_name = {point["modelName"]: point["score"] for point in points}
    assert by_name["Qwen-14B"] == 65.5
    assert by_name["GPT-4 (snapshot unspecified)"] == 82.8


async def test_siblings(page: dict[str, Any]) -> None:
    siblings = page["benchmark"]["siblings"]
    assert siblings["totalCount"] == 6
    assert [
        (node["name"], node["trackedLeader"]["modelName"], node["trackedLeader"]["score"])
        for node in siblings["nodes"]
    ] == [
        ("AutomationBench", "Gemini 4 Carbon", 53.9),
        ("MCP Atlas", "Gemini 4 Argon", 90.7),
        ("BFCL V4", "Qwen3.7-Max", 75.0),
        ("τ³-bench Banking", "Qwen 3.8 Max", 55.1),
        ("Toolathlon-Verified", "GLM-5.3-Flash", 78.4),
        ("DeepSearchQA", "Kimi K3", 95.0),
    ]
    assert {node["status"] for node in siblings["nodes"]} == {"IN_USE"}
    assert siblings["nodes"][0]["description"] == (
        "Agent completes end-to-end business workflows inside a simulated company exposing "
        "dozens of REST APIs. Graded on resulting state."
    )
    assert siblings["nodes"][5]["description"] == (
        "Questions that need multi-step search and synthesis. Final answers graded against "
        "references."
    )


async def test_category_counts_every_benchmark_in_it(page: dict[str, Any]) -> None:
    # The bundled data holds the family (parent and four tracks) and the six siblings.
    assert page["benchmark"]["category"] == {
        "slug": "tool-use",
        "name": "Tool use",
        "benchmarkCount": 11,
    }


async def test_unknown_benchmark_is_null(graphql: GraphQLClient) -> None:
    data = await graphql.data(CONTRACT.read_text(encoding="utf-8"), slug="no-such-benchmark")
    assert data["benchmark"] is None


def test_every_object_with_an_id_is_selected_with_it() -> None:
    """So that a normalizing cache (Apollo's, Relay's) keeps each benchmark and model once."""
    document = parse(CONTRACT.read_text(encoding="utf-8"))
    types = TypeInfo(published_types(schema))
    missing: list[str] = []

    class Selections(Visitor):
        def enter_selection_set(self, node: SelectionSetNode, *_: object) -> None:
            parent = get_named_type(types.get_type())
            fields = getattr(parent, "fields", {})
            selected = {s.name.value for s in node.selections if isinstance(s, FieldNode)}
            if "id" in fields and "id" not in selected:
                missing.append(str(parent))

    visit(document, TypeInfoVisitor(types, Selections()))
    assert missing == []


async def test_every_id_on_the_page_names_its_object(
    page: dict[str, Any], graphql: GraphQLClient
) -> None:
    """Each `id` the page holds is the global ID of the object it came with."""
    found: list[dict[str, Any]] = []

    def collect(value: object) -> None:
        if isinstance(value, dict):
            if "id" in value:
                found.append(value)
            for inner in value.values():
                collect(inner)
        elif isinstance(value, list):
            for inner in value:
                collect(inner)

    collect(page)
    assert len(found) >= 1 + 1 + 4 + 2 + 6  # the page, its parent, tracks, models, siblings
    for selected in found:
        named = await graphql.data(
            "query($id: ID!) { node(id: $id) { ... on Benchmark { name } ... on Model { name } } }",
            id=selected["id"],
        )
        assert named["node"] == {"name": selected["name"]}, selected
