"""Names as the source printed them: a row keeps its printed name (`listedAs`), and rows match
across reads by model, so a faithful re-send of the leaderboard is not a change."""

from typing import Any

from tests.conftest import GraphQLClient
from tests.http.reads.test_leaderboard_reads import GENERAL, record

SHOWN = """
query($slug: String!) {
  benchmark(slug: $slug) {
    leaderboard { modelName listedAs setting score source publishedOn note }
    scoresOverTime(last: 1000) { modelName score date }
  }
}"""
READS = """
query($slug: String!) {
  benchmark(slug: $slug) {
    reads(first: 1) {
      nodes { readOn added { modelName } removed { modelName } changed { modelName } }
    }
  }
}"""


def sent_back(row: dict[str, Any]) -> dict[str, Any]:
    """A row as an editor would send it back: as the API shows it, the almanac's name included."""
    return {
        "modelName": row["modelName"],
        "setting": row["setting"],
        "score": row["score"],
        "source": row["source"],
        "publishedOn": row["publishedOn"],
        "note": row["note"],
    }


async def test_the_leaderboard_sent_back_with_one_new_row_records_only_that_row(
    admin: GraphQLClient,
) -> None:
    before = (await admin(SHOWN, slug=GENERAL))["data"]["benchmark"]
    qwen = next(row for row in before["leaderboard"] if row["modelName"] == "Qwen-14B")
    assert qwen["listedAs"] == "Qwen-14B-Chat"  # the API shows the almanac's name for it

    new_row = {"modelName": "Test Model X", "setting": "v1", "score": 12.5}
    rows = [sent_back(row) for row in before["leaderboard"]] + [new_row]
    assert (await record(admin, "2026-11-20", rows))["data"]["recordLeaderboardRead"]["recorded"]

    read = (await admin(READS, slug=GENERAL))["data"]["benchmark"]["reads"]["nodes"][0]
    assert read == {
        "readOn": "2026-11-20",
        "added": [{"modelName": "Test Model X"}],
        "removed": [],
        "changed": [],
    }
    after = (await admin(SHOWN, slug=GENERAL))["data"]["benchmark"]
    assert len(after["scoresOverTime"]) == len(before["scoresOverTime"]) + 1
    # The name the source printed is kept, though the row was sent under the almanac's name.
    qwen_after = next(row for row in after["leaderboard"] if row["modelName"] == "Qwen-14B")
    assert qwen_after["listedAs"] == "Qwen-14B-Chat"


async def test_a_row_under_an_alias_and_under_the_name_is_one_row_in_a_read(
    admin: GraphQLClient,
) -> None:
    rows = [
        {"modelName": "Qwen-14B-Chat", "setting": "v1", "score": 60.0},
        {"modelName": "Qwen-14B", "setting": "v1", "score": 61.0},
    ]
    body = await record(admin, "2026-11-20", rows)
    assert body["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    assert "one row per model and setting" in body["errors"][0]["message"]
