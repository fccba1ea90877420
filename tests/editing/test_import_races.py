"""An import racing `createModel` for a model its rows name: the model's standings (and every
derived placement) end as a recomputation from scratch says, whichever lands first.

The races are run as deterministic interleavings of the real code: the import (the change
service in its import workspace) and the API's `createModel` (through HTTP), paused at the
store calls where the other's writes can slip in."""

import asyncio
import csv
import io
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from editing.changes import Stamp
from editing.dataset import dataset_from_csv
from editing.derived import placed_anew
from editing.importer import import_dataset
from resolvers.tracking import index_by_key
from store import Store
from tests.conftest import GraphQLClient

GENERAL = "code-interpreter-benchmark-general"
RACER = "racer-1"
STAMP = Stamp(by="importer", at=datetime(2026, 11, 29, 12, 0, tzinfo=UTC))
CREATE = """
mutation($slug: String!, $input: ModelInput!) {
  createModel(slug: $slug, input: $input) { slug }
}"""
STANDINGS = """
query($slug: String!) {
  model(slug: $slug) { standings(first: 100) { totalCount nodes { rank benchmark { slug } } } }
}"""


def rows(on: str, racer_score: float | None) -> str:
    """A read of GENERAL: two bundled models, and Racer 1 (not yet a tracked model) if scored."""
    return (
        "benchmark,read_on,model_name,score\n"
        + (f"{GENERAL},{on},Racer 1,{racer_score}\n" if racer_score is not None else "")
        + f"{GENERAL},{on},Qwen-14B-Chat,70\n"
        f"{GENERAL},{on},GPT-4 (snapshot unspecified),80\n"
    )


async def imported(store: Store, text: str) -> None:
    summary = await import_dataset(store, dataset_from_csv(text), STAMP, allow_removals=True)
    assert not summary.rejected, summary.rejected


async def create_racer(admin: GraphQLClient) -> None:
    await admin.data(CREATE, slug=RACER, input={"name": "Racer 1", "lab": "qwen"})


async def from_scratch(store: Store) -> dict[str, dict[str, int]]:
    """Every tracked model's place on every leaderboard, computed anew from what is stored."""
    models = await store.models()
    tracked = index_by_key(models)
    placed: dict[str, dict[str, int]] = {model["slug"]: {} for model in models}
    ranks, _ = placed_anew(await store.benchmarks(), tracked)
    for slug, (_, places) in ranks.items():
        for place in places:
            placed[place["model"]][slug] = place["rank"]
    return placed


async def served(graphql: GraphQLClient, models: list[str]) -> dict[str, dict[str, int]]:
    """Every tracked model's standings, as the API serves them."""
    placed = {}
    for slug in models:
        standings = (await graphql.data(STANDINGS, slug=slug))["model"]["standings"]
        nodes = {node["benchmark"]["slug"]: node["rank"] for node in standings["nodes"]}
        assert standings["totalCount"] == len(nodes)
        placed[slug] = nodes
    return placed


async def check_placements(
    store: Store, graphql: GraphQLClient, client: httpx.AsyncClient, racer: dict[str, int]
) -> None:
    """Every model's standings, and Racer 1's download, are what is stored says; Racer 1's
    are `racer` (the race was about something)."""
    expected = await from_scratch(store)
    assert expected[RACER] == racer
    assert await served(graphql, list(expected)) == expected
    download = await client.get(f"/models/{RACER}.csv")
    assert download.status_code == 200
    listed = {
        row["benchmark"]: int(row["rank"]) for row in csv.DictReader(io.StringIO(download.text))
    }
    assert listed == expected[RACER]


def paused(
    method: Callable[..., Awaitable[Any]], before: Callable[[], Awaitable[None]] | None = None
) -> Callable[..., Awaitable[Any]]:
    """`method`, which first awaits `before` on its first call."""
    first = True

    async def call(*args: Any, **kwargs: Any) -> Any:
        nonlocal first
        if first and before is not None:
            first = False
            await before()
        return await method(*args, **kwargs)

    return call


async def test_a_model_created_between_the_imports_snapshot_and_its_write(
    store: Store,
    admin: GraphQLClient,
    graphql: GraphQLClient,
    client: httpx.AsyncClient,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`createModel` runs whole after the import read its models, before its benchmarks land:
    it places Racer 1 on the leaderboards stored then, which the import then replaces."""
    monkeypatch.setattr(
        store, "write_batch", paused(store.write_batch, lambda: create_racer(admin))
    )
    await imported(store, rows("2026-11-20", 95))
    await check_placements(store, graphql, client, racer={GENERAL: 1})


async def test_a_model_created_while_the_import_writes_what_it_placed(
    store: Store,
    admin: GraphQLClient,
    graphql: GraphQLClient,
    client: httpx.AsyncClient,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`createModel` reads the leaderboards naming Racer 1, the import's write (which drops
    Racer 1's row) lands, then `createModel` writes the places it computed from the leaderboard
    that was."""
    await imported(store, rows("2026-11-20", 50))  # Racer 1 listed before it is tracked
    read, written = asyncio.Event(), asyncio.Event()

    async def after_read_wait_for_write(*args: Any) -> Any:
        found = await reading(*args)
        read.set()
        await written.wait()
        return found

    async def write_after_read(writes: Any, **named: Any) -> Any:
        await read.wait()
        try:
            return await writing(writes, **named)
        finally:
            written.set()

    reading, writing = store.benchmarks_with_model_keys, store.write_batch
    monkeypatch.setattr(store, "benchmarks_with_model_keys", after_read_wait_for_write)
    monkeypatch.setattr(store, "write_batch", write_after_read)
    await asyncio.wait_for(
        asyncio.gather(imported(store, rows("2026-11-25", None)), create_racer(admin)), 60
    )
    await check_placements(store, graphql, client, racer={})
