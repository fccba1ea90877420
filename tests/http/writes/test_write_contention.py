"""Many writers at once, on a store as slow as a networked MongoDB: a change without
`expectedRevision` always lands, and one with it lands only where nobody else got there first."""

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from editing import editor
from store import Store
from tests.conftest import ROUND_TRIPS, GraphQLClient

GENERAL = "code-interpreter-benchmark-general"
WRITERS = 50

UPDATE = """
mutation($input: BenchmarkInput!, $expected: Int) {
  updateBenchmark(slug: "code-interpreter-benchmark-general", input: $input,
                  expectedRevision: $expected) { revision }
}"""
RECORD = """
mutation($input: LeaderboardReadInput!, $expected: Int) {
  recordLeaderboardRead(benchmark: "code-interpreter-benchmark-general", input: $input,
                        expectedRevision: $expected) { recorded read { revision } }
}"""
STATE = """
{ benchmark(slug: "code-interpreter-benchmark-general") {
    revision description reads(first: 100) { totalCount } } }"""


@pytest.fixture
def slow_store(store: Store, monkeypatch: pytest.MonkeyPatch) -> Store:
    """Every store call waits 0-2 ms first, as a round trip to a networked database does."""

    def slowed(method: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def call(*args: Any, **kwargs: Any) -> Any:
            await asyncio.sleep(random.uniform(0, 0.002))
            return await method(*args, **kwargs)

        return call

    for name in ROUND_TRIPS:
        monkeypatch.setattr(store, name, slowed(getattr(store, name)))
    return store


def read_with(score: float) -> dict[str, Any]:
    # One row: the bundled leaderboard's others are left out on purpose.
    entries = [{"modelName": "Qwen-14B-Chat", "score": score}]
    return {"readOn": "2026-11-20", "entries": entries, "allowRemovals": True}


async def test_concurrent_updates_without_a_revision_all_land(
    admin: GraphQLClient, slow_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each writer retries until it lands; on a loaded machine that may take longer than the
    # window a live server gives it, so the test gives a generous one (it checks that all land).
    monkeypatch.setattr(editor, "RETRY_SECONDS", 120.0)
    before = (await admin.data(STATE))["benchmark"]["revision"]
    bodies = await asyncio.gather(
        *(admin(UPDATE, input={"description": f"Writer {i}"}) for i in range(WRITERS))
    )
    assert [body.get("errors") for body in bodies] == [None] * WRITERS
    revisions = sorted(body["data"]["updateBenchmark"]["revision"] for body in bodies)
    assert revisions == list(range(before + 1, before + WRITERS + 1))
    after = (await admin.data(STATE))["benchmark"]
    assert after["revision"] == before + WRITERS
    assert after["description"] in {f"Writer {i}" for i in range(WRITERS)}


async def test_concurrent_reads_without_a_revision_all_land_in_the_history(
    admin: GraphQLClient, slow_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(editor, "RETRY_SECONDS", 120.0)  # as above
    before = (await admin.data(STATE))["benchmark"]["reads"]["totalCount"]
    bodies = await asyncio.gather(
        *(admin(RECORD, input=read_with(50 + i / 10)) for i in range(WRITERS))
    )
    assert [body.get("errors") for body in bodies] == [None] * WRITERS
    assert all(body["data"]["recordLeaderboardRead"]["recorded"] for body in bodies)
    after = (await admin.data(STATE))["benchmark"]["reads"]["totalCount"]
    assert after == before + WRITERS


async def test_concurrent_writes_at_one_revision_land_once(
    admin: GraphQLClient, slow_store: Store
) -> None:
    revision = (await admin.data(STATE))["benchmark"]["revision"]
    bodies = await asyncio.gather(
        *(
            admin(UPDATE, input={"description": f"Writer {i}"}, expected=revision)
            for i in range(WRITERS)
        )
    )
    landed = [body for body in bodies if "errors" not in body]
    refused = [body["errors"][0]["extensions"]["code"] for body in bodies if "errors" in body]
    assert len(landed) == 1
    assert refused == ["CONFLICT"] * (WRITERS - 1)
    assert (await admin.data(STATE))["benchmark"]["revision"] == revision + 1
