"""Any leaderboard as of a date: answered from the read history, with today's tracked models."""

from typing import Any

from tests.conftest import GraphQLClient
from tests.http.reads.test_leaderboard_reads import GENERAL, record, row

AS_OF = """
query($slug: String!, $day: Date) {
  benchmark(slug: $slug) {
    leaderboard(asOf: $day) { rank modelName score tracked }
    leader(asOf: $day) { modelName score }
    trackedLeader(asOf: $day) { modelName score }
    entryCount(asOf: $day)
  }
}"""

FIRST = [row("Qwen-14B-Chat", 60.0), row("GPT-4 (snapshot unspecified)", 80.0)]
SECOND = [row("Qwen-14B-Chat", 66.0, "2026-11-15"), row("GPT-4 (snapshot unspecified)", 79.0)]
THIRD = [row("Qwen-14B-Chat", 67.5, "2026-11-26"), row("Unlisted Model", 90.0, "2026-11-26")]


async def as_of(client: GraphQLClient, day: str | None) -> Any:
    body = await client(AS_OF, slug=GENERAL, day=day)
    assert "errors" not in body, body
    return body["data"]["benchmark"]


async def test_three_successive_reads_each_answer_for_their_days(admin: GraphQLClient) -> None:
    bundled = await as_of(admin, None)  # the bundled read, of 2026-11-12
    for on, entries in (("2026-11-20", FIRST), ("2026-11-24", SECOND), ("2026-11-27", THIRD)):
        assert (await record(admin, on, entries))["data"]["recordLeaderboardRead"]["recorded"]

    before_any = await as_of(admin, "2026-11-11")
    assert before_any == {"leaderboard": [], "leader": None, "trackedLeader": None, "entryCount": 0}

    assert await as_of(admin, "2026-11-12") == bundled
    assert await as_of(admin, "2026-11-19") == bundled  # still the last read on or before it

    first = await as_of(admin, "2026-11-20")
    assert first["leaderboard"] == [
        {"rank": 1, "modelName": "GPT-4 (snapshot unspecified)", "score": 80.0, "tracked": False},
        {"rank": 2, "modelName": "Qwen-14B", "score": 60.0, "tracked": True},
    ]
    assert first["leader"] == {"modelName": "GPT-4 (snapshot unspecified)", "score": 80.0}
    assert first["trackedLeader"] == {"modelName": "Qwen-14B", "score": 60.0}

    second = await as_of(admin, "2026-11-26")
    assert second["trackedLeader"] == {"modelName": "Qwen-14B", "score": 66.0}
    assert second["leader"] == {"modelName": "GPT-4 (snapshot unspecified)", "score": 79.0}
    assert second["entryCount"] == 2

    third = await as_of(admin, "2026-11-30")
    assert third["leader"] == {"modelName": "Unlisted Model", "score": 90.0}
    assert third["trackedLeader"] == {"modelName": "Qwen-14B", "score": 67.5}
    # Today's leaderboard is the last read's.
    assert third == await as_of(admin, None)


async def test_a_day_that_is_not_a_date_is_refused(admin: GraphQLClient) -> None:
    body = await admin(AS_OF, slug=GENERAL, day="2026-02-30")
    assert [e["extensions"]["code"] for e in body["errors"]] == ["BAD_USER_INPUT"]
