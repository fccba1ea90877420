"""The other three tracks' pages and the parent's page, checked against the published tables."""

from typing import Any

import pytest

from tests.conftest import GraphQLClient
from tests.published import (
    CAPABILITY_RANK,
    COMBINED_RESULTS,
    RELEASED,
    TRACKS,
    expected_board,
    track_scores,
)

PAGE = """
query Page($slug: String!) {
  benchmark(slug: $slug) {
    name
    entryCount
    trackedModelCount
    leader { modelName score tracked }
    trackedLeader { modelName score }
    strongestModelTested { name capabilityIndexRank }
    lastModelAdded { name releasedOn }
    leaderboard { rank modelName score tracked setting }
    scoresOverTime { modelName score }
    parent { slug }
    tracks { slug }
    siblings(first: 20) { totalCount nodes { slug } }
  }
}
"""

SLUG = {track: f"code-interpreter-benchmark-{track.lower()}" for track in TRACKS}
PARENT = "code-interpreter-benchmark"


def check_page(benchmark: dict[str, Any], scores: dict[str, float]) -> None:
    board = expected_board(scores)
    rows = benchmark["leaderboard"]
    assert [(r["modelName"], r["score"], r["tracked"]) for r in rows] == board
    assert [r["rank"] for r in rows] == list(range(1, len(board) + 1))
    name, score, tracked = board[0]
    assert benchmark["leader"] == {"modelName": name, "score": score, "tracked": tracked}
    tracked_rows = [row for row in board if row[2]]
    assert benchmark["trackedLeader"] == {
        "modelName": tracked_rows[0][0],
        "score": tracked_rows[0][1],
    }
    assert benchmark["entryCount"] == len(scores)
    assert benchmark["trackedModelCount"] == len(tracked_rows)
    tracked_names = [row[0] for row in tracked_rows]
    ranked = [n for n in tracked_names if n in CAPABILITY_RANK]
    strongest = min(ranked, key=CAPABILITY_RANK.__getitem__)
    assert benchmark["strongestModelTested"] == {
        "name": strongest,
        "capabilityIndexRank": CAPABILITY_RANK[strongest],
    }
    newest = max(tracked_names, key=RELEASED.__getitem__)
    assert benchmark["lastModelAdded"] == {"name": newest, "releasedOn": RELEASED[newest]}
    assert sorted((p["modelName"], p["score"]) for p in benchmark["scoresOverTime"]) == sorted(
        (row[0], row[1]) for row in board
    )


@pytest.mark.parametrize("track", TRACKS)
async def test_track_page(graphql: GraphQLClient, track: str) -> None:
    benchmark = (await graphql.data(PAGE, slug=SLUG[track]))["benchmark"]
    assert benchmark["name"] == f"Code Interpreter Benchmark {track}"
    check_page(benchmark, track_scores(track))
    assert {row["setting"] for row in benchmark["leaderboard"]} == {"version 20231206"}
    assert benchmark["parent"] == {"slug": PARENT}
    assert [t["slug"] for t in benchmark["tracks"]] == [SLUG[t] for t in TRACKS]
    assert benchmark["siblings"]["totalCount"] == 6


async def test_parent_page(graphql: GraphQLClient) -> None:
    benchmark = (await graphql.data(PAGE, slug=PARENT))["benchmark"]
    assert benchmark["name"] == "Code Interpreter Benchmark"
    check_page(benchmark, COMBINED_RESULTS)
    assert benchmark["parent"] is None
    assert [t["slug"] for t in benchmark["tracks"]] == [SLUG[t] for t in TRACKS]
    siblings = benchmark["siblings"]
    assert siblings["totalCount"] == 6
    assert PARENT not in [node["slug"] for node in siblings["nodes"]]
