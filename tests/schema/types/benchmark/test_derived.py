"""A benchmark's derived leaderboard is computed once per version of what it reads, and kept:
a page executed anew does not compute it again until the benchmark or a model it names
changes."""

from collections import Counter
from typing import Any

import pytest

from resolvers.leaderboards import Row, leaderboard
from schema.types import changes
from schema.types.benchmark import benchmark, derived, loading
from schema.types.leaderboard import LeaderboardRow
from server.settings import Settings
from tests.conftest import GraphQLClient
from tests.http.reads.test_contract import CONTRACT, GENERAL
from tests.http.reads.test_leaderboard_reads import SEEDED

UPDATE = """
mutation($slug: String!, $input: ModelInput!) {
  updateModel(slug: $slug, input: $input) { name revision }
}"""
RECORD = """
mutation($slug: String!, $input: LeaderboardReadInput!) {
  recordLeaderboardRead(benchmark: $slug, input: $input) { benchmark { revision } }
}"""


@pytest.fixture
def settings() -> Settings:
    return Settings(response_cache_bytes=0)  # Every page executed anew, none reused.


@pytest.fixture
def computed(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How many leaderboards were computed (the rules' own function, counted where the schema
    calls it: a derived leaderboard, one of a date or of some reporters, a change's)."""
    counted: Counter[str] = Counter()

    def counting(entries: Any, **options: Any) -> list[Row]:
        counted["leaderboards"] += 1
        return leaderboard(entries, **options)

    for module in (derived, loading, changes):
        monkeypatch.setattr(module, "leaderboard", counting)
    return counted


async def page(graphql: GraphQLClient) -> dict[str, Any]:
    data = await graphql.data(CONTRACT.read_text(encoding="utf-8"), slug=GENERAL)
    benchmark: dict[str, Any] = data["benchmark"]
    return benchmark


async def test_a_page_executed_again_computes_no_leaderboard(
    admin: GraphQLClient, computed: Counter[str]
) -> None:
    first = await page(admin)
    assert first["siblings"]["nodes"]
    # Its own; its siblings show the leaders stored with them, computed when they were written.
    assert computed.total() == 1
    computed.clear()
    assert await page(admin) == first
    assert computed.total() == 0


async def test_a_renamed_model_is_shown_at_once_and_only_its_boards_computed(
    admin: GraphQLClient, computed: Counter[str]
) -> None:
    before = await page(admin)
    assert before["trackedLeader"]["modelName"] == "Qwen-14B"
    computed.clear()
    renamed = await admin.data(UPDATE, slug="qwen-14b", input={"name": "Qwen 14B"})
    assert renamed["updateModel"] == {"name": "Qwen 14B", "revision": 2}
    after = await page(admin)
    # The benchmark did not change; a model its rows name did: computed again, and shown.
    assert after["trackedLeader"]["modelName"] == "Qwen 14B"
    names = {row["modelName"] for row in after["leaderboard"]}
    assert "Qwen 14B" in names
    assert "Qwen-14B" not in names
    # Only its own leaderboard names the model; its shown siblings' are kept.
    assert computed.total() == 1


async def test_a_new_read_is_shown_at_once_and_only_its_board_computed(
    admin: GraphQLClient, computed: Counter[str]
) -> None:
    before = await page(admin)
    assert (before["trackedLeader"]["modelName"], before["trackedLeader"]["score"]) == (
        "Qwen-14B",
        65.5,
    )
    rows = [{"modelName": "Qwen-14B-Chat", "setting": "version 20231206", "score": 70.0}]
    read = {"readOn": "2026-11-20", "entries": rows, "allowRemovals": True}
    recorded = await admin.data(RECORD, slug=GENERAL, input=read)
    assert recorded["recordLeaderboardRead"]["benchmark"]["revision"] == SEEDED + 1
    computed.clear()
    after = await page(admin)
    assert after["trackedLeader"]["score"] == 70.0
    assert after["entryCount"] == 1
    assert computed.total() == 1  # its own; its shown siblings' are kept


SIBLINGS = """
query($slug: String!) {
  benchmark(slug: $slug) {
    siblings(first: 6) {
      nodes { slug leader { listedAs tracked score } trackedLeader { modelName listedAs score model { slug aliases } } }
    }
  }
}"""
CATALOG = """
{ benchmarks(first: 100) {
    nodes { slug revision leader { listedAs tracked score } trackedLeader { modelName score } }
} }"""
CREATE = """
mutation($slug: String!, $input: ModelInput!) { createModel(slug: $slug, input: $input) { slug } }
"""


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How many benchmarks' own fields were read off their documents, and how many stored
    leaders were made into rows."""
    counted: Counter[str] = Counter()
    fields = benchmark.own_fields
    place = LeaderboardRow.from_place.__func__  # type: ignore[attr-defined]

    def counting_fields(doc: Any) -> dict[str, Any]:
        counted["benchmarks"] += 1
        return fields(doc)

    def counting_place(cls: type[LeaderboardRow], *args: Any) -> LeaderboardRow:
        counted["stored leaders"] += 1
        return place(cls, *args)  # type: ignore[no-any-return]

    monkeypatch.setattr(benchmark, "own_fields", counting_fields)
    monkeypatch.setattr(LeaderboardRow, "from_place", classmethod(counting_place))
    return counted


async def siblings(graphql: GraphQLClient) -> list[dict[str, Any]]:
    data = await graphql.data(SIBLINGS, slug=GENERAL)
    nodes: list[dict[str, Any]] = data["benchmark"]["siblings"]["nodes"]
    return nodes


async def test_a_page_executed_again_reads_no_benchmark_nor_stored_leader_anew(
    admin: GraphQLClient, built: Counter[str]
) -> None:
    first = await page(admin)
    # Itself, its parent, its tracks and its siblings; its siblings' tracked leaders.
    assert built["benchmarks"] >= 1 + len(first["tracks"]) + len(first["siblings"]["nodes"])
    assert built["stored leaders"] == len(first["siblings"]["nodes"])
    built.clear()
    assert await page(admin) == first
    assert built.total() == 0


async def test_a_renamed_model_is_shown_at_once_as_a_siblings_tracked_leader(
    admin: GraphQLClient, built: Counter[str]
) -> None:
    before = await siblings(admin)
    sibling = before[0]
    model = sibling["trackedLeader"]["model"]["slug"]
    # Still named by the rows that named it: its old name stays one of its aliases.
    aliases = [*sibling["trackedLeader"]["model"]["aliases"], sibling["trackedLeader"]["listedAs"]]
    update = {"name": "Renamed Model", "aliases": sorted(set(aliases))}
    renamed = await admin.data(UPDATE, slug=model, input=update)
    assert renamed["updateModel"]["name"] == "Renamed Model"
    built.clear()
    after = await siblings(admin)
    assert after[0]["trackedLeader"]["modelName"] == "Renamed Model"
    # Only the rows naming the renamed model are made again.
    led = [node for node in before if node["trackedLeader"]["model"]["slug"] == model]
    assert built["stored leaders"] == len(led)
    assert built["benchmarks"] == 0


async def test_a_leader_placed_anew_at_the_same_revision_is_shown_at_once(
    admin: GraphQLClient,
) -> None:
    """A new model that an untracked leader's name names makes it the tracked leader: the
    benchmark's stored leaders are placed anew at its revision (editing.workspace)."""
    before = await catalog(admin)
    row = next(node for node in before if node["leader"] and not node["leader"]["tracked"])
    listed = row["leader"]["listedAs"]
    await admin.data(CREATE, slug="placed-anew", input={"name": "Placed Anew", "aliases": [listed]})
    after = next(node for node in await catalog(admin) if node["slug"] == row["slug"])
    assert after["revision"] == row["revision"]
    assert after["trackedLeader"]["modelName"] == "Placed Anew"
    assert after["trackedLeader"]["score"] == row["leader"]["score"]


async def catalog(graphql: GraphQLClient) -> list[dict[str, Any]]:
    data = await graphql.data(CATALOG)
    nodes: list[dict[str, Any]] = data["benchmarks"]["nodes"]
    return nodes
