"""A kept list's completed value is taken again for the same plain selection, and only then.

Answer reuse is off (`response_cache_bytes=0`): every request executes. What is kept is planted
over (a row renamed) to see whether the next execution takes it: a selection that qualifies
shows the planted row, one that does not (a directive, a field with a resolver, another
version of the leaderboard) shows the data as it is."""

from datetime import UTC, datetime
from typing import Any
from unittest.mock import ANY

import httpx
import pytest

from editing.changes import Stamp
from editing.importer import import_dataset
from schema.completion import NOT_PLAIN
from schema.types.benchmark.derived import kept_for
from schema.vocabulary import Kept
from server.settings import Settings
from store import Store
from store.seed import load_bundled_dataset
from tests.http.reads.test_contract import GENERAL

ROWS = """query Rows($slug: String!) {
  benchmark(slug: $slug) {
    leaderboard { __typename rank modelName ...Row ... on LeaderboardRow { ...Setting } score }
    scoresOverTime { date score modelName }
    strongestModelTested { name }
    siblings(first: 2) { nodes { slug } }
  }
}
fragment Row on LeaderboardRow { tracked model { ...Model } }
fragment Model on Model { id slug name }
fragment Setting on LeaderboardRow { setting }"""
SHOWING = ROWS.replace("$slug: String!)", "$slug: String!, $show: Boolean!)")
SHOWN = SHOWING.replace("rank modelName", "rank modelName @include(if: $show)")
LIST_SHOWN = SHOWING.replace("leaderboard {", "leaderboard @include(if: $show) {")
SLICED = ROWS.replace("leaderboard {", "leaderboard(first: 2) {")
RANGES = ROWS.replace("rank modelName", "rank modelName rankRange { best worst }")
PLANTED = "planted"


@pytest.fixture
def settings() -> Settings:
    return Settings(response_cache_bytes=0)


async def rows(client: httpx.AsyncClient, query: str, **variables: Any) -> dict[str, Any]:
    answer = (await client.post("/graphql", json={"query": query, "variables": variables})).json()
    assert "errors" not in answer
    benchmark: dict[str, Any] = answer["data"]["benchmark"]
    return benchmark


def kept_rows(store: Store) -> Kept[Any]:
    [board] = [
        board for board in kept_for(store).boards.values() if board.benchmark["slug"] == GENERAL
    ]
    return board.rows


def plant(kept: Kept[Any]) -> list[Any]:
    """Rename the first row in every completed value kept with `kept`; the values planted."""
    planted = []
    for key, (nodes, value) in list(kept.completed.items()):
        if value is not NOT_PLAIN:
            value = [{**value[0], "modelName": PLANTED}, *value[1:]]
            kept.completed[key] = (nodes, value)
            planted.append(value)
    return planted


async def test_a_plain_selection_is_completed_once(client: httpx.AsyncClient, store: Store) -> None:
    first = await rows(client, ROWS, slug=GENERAL)
    [completed] = plant(kept_rows(store))
    assert completed[1:] == first["leaderboard"][1:]
    assert len(first["leaderboard"]) > 1

    again = await rows(client, ROWS, slug=GENERAL)
    assert again["leaderboard"][0]["modelName"] == PLANTED  # taken as kept
    assert again["leaderboard"][1:] == first["leaderboard"][1:]
    assert again["scoresOverTime"] == first["scoresOverTime"]
    assert again["siblings"] == first["siblings"]
    assert len(first["siblings"]["nodes"]) == 2
    assert any(row["model"] for row in first["leaderboard"])


async def test_a_slice_is_a_slice_of_the_whole_lists_completed_value(
    client: httpx.AsyncClient, store: Store
) -> None:
    first = await rows(client, SLICED, slug=GENERAL)
    [completed] = plant(kept_rows(store))  # the whole list's, completed for the slice
    assert len(completed) > len(first["leaderboard"]) == 2
    assert first["leaderboard"] == [{**completed[0], "modelName": ANY}, completed[1]]
    again = await rows(client, SLICED, slug=GENERAL)
    assert again["leaderboard"] == completed[:2]
    assert again["leaderboard"][0]["modelName"] == PLANTED


async def test_a_selection_with_a_directive_is_completed_each_time(
    client: httpx.AsyncClient, store: Store
) -> None:
    shown = await rows(client, SHOWN, slug=GENERAL, show=True)
    assert plant(kept_rows(store)) == []
    hidden = await rows(client, SHOWN, slug=GENERAL, show=False)
    assert "modelName" in shown["leaderboard"][0]
    assert "modelName" not in hidden["leaderboard"][0]
    assert [row["rank"] for row in hidden["leaderboard"]] == [
        row["rank"] for row in shown["leaderboard"]
    ]


async def test_a_list_with_a_directive_is_completed_each_time(
    client: httpx.AsyncClient, store: Store
) -> None:
    shown = await rows(client, LIST_SHOWN, slug=GENERAL, show=True)
    assert plant(kept_rows(store)) == []
    assert shown == await rows(client, LIST_SHOWN, slug=GENERAL, show=True)
    assert "leaderboard" not in await rows(client, LIST_SHOWN, slug=GENERAL, show=False)


async def test_a_field_with_a_resolver_makes_the_selection_completed_each_time(
    client: httpx.AsyncClient, store: Store
) -> None:
    first = await rows(client, RANGES, slug=GENERAL)
    assert plant(kept_rows(store)) == []
    again = await rows(client, RANGES, slug=GENERAL)
    assert again == first
    assert first["leaderboard"][0]["rankRange"]["best"] == 1


async def test_each_selection_and_each_version_is_completed_anew(
    client: httpx.AsyncClient, store: Store
) -> None:
    first = await rows(client, ROWS, slug=GENERAL)
    plant(kept_rows(store))
    other = await rows(client, ROWS.replace("score }", "score source }", 1), slug=GENERAL)
    assert other["leaderboard"][0]["modelName"] == first["leaderboard"][0]["modelName"]

    dataset = load_bundled_dataset()
    general = next(b for b in dataset["benchmarks"] if b["slug"] == GENERAL)
    [read] = general["reads"]
    rescored = [{**row, "score": row["score"] - 1} for row in read["entries"]]
    general["reads"].append({"read_on": "2026-11-20", "entries": rescored})
    await import_dataset(store, dataset, Stamp("test", datetime.now(UTC)))

    after = await rows(client, ROWS, slug=GENERAL)
    assert after["leaderboard"][0]["modelName"] == first["leaderboard"][0]["modelName"]
    assert after["leaderboard"][0]["score"] == first["leaderboard"][0]["score"] - 1
