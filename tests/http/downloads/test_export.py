"""`/export.ndjson`: priced from a count and charged before any document is read, streamed from
the store a batch at a time, and bounded: one export per client, a few in all."""

import asyncio
import json
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from starlette.types import Message

import editing.export
from editing import export_dataset
from editing.dataset import Dataset
from server.app import AlmanacApp, create_app
from server.settings import Settings
from store import Store
from store.queries import Collection
from tests.conftest import http_client

# A budget that does not refill while a test runs: what a request cost is what it took.
STILL = {"anonymous_restore_rate": 1e-9, "key_restore_rate": 1e-9}


def exported_items(dataset: Dataset) -> int:
    return sum(len(dataset[section]) for section in ("labs", "categories", "models", "benchmarks"))


def app_with(store: Store, **settings: Any) -> AlmanacApp:
    return create_app(Settings(**{**STILL, **settings}), store)


async def test_an_export_is_priced_from_a_count_and_refused_before_reading(
    store: Store, calls: Counter[str]
) -> None:
    """One point an item and one for the file; a 304 one point; over budget, refused before
    any document is read, whatever the almanac's size: one count."""
    items = exported_items(await export_dataset(store))
    budget = 1 + items + 1  # one export and one revalidation
    app = app_with(store, anonymous_bucket_capacity=budget, max_query_cost=budget)
    async with http_client(app) as http:
        first = await http.get("/export.ndjson")
        assert first.status_code == 200
        # One line for the format, provenance and site figures, then one an item.
        assert len(first.text.splitlines()) == 1 + items
        assert budget - int(first.headers["ratelimit-remaining"]) == 1 + items
        again = await http.get("/export.ndjson", headers={"If-None-Match": first.headers["etag"]})
        assert again.status_code == 304
        assert again.headers["ratelimit-remaining"] == "0"
        calls.clear()
        refused = await http.get("/export.ndjson")
    await app.services.shared.budgets.close()
    assert refused.status_code == 429
    error = refused.json()["errors"][0]
    assert error["extensions"]["code"] == "THROTTLED"
    assert int(refused.headers["retry-after"]) > 0
    assert refused.json()["extensions"]["cost"]["requestedQueryCost"] == 0  # charged nothing
    assert f"costs {1 + items} points" in error["message"]
    assert calls == Counter({"item_counts": 1})


@dataclass
class HeldExport:
    """An export through the app's ASGI interface whose client stops reading after the first
    line (it holds its slot) until `leave` is called: then it disconnects."""

    task: asyncio.Task[None]
    started: asyncio.Event
    gone: asyncio.Event
    messages: list[Message] = field(default_factory=list)

    def leave(self) -> None:
        self.gone.set()


async def held_export(app: AlmanacApp, address: str) -> HeldExport:
    started, gone = asyncio.Event(), asyncio.Event()
    messages: list[Message] = []
    asked = False

    async def receive() -> Message:
        nonlocal asked
        if not asked:
            asked = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        messages.append(message)
        if message["type"] == "http.response.start" or message.get("body"):
            started.set()
            await gone.wait()

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": "/export.ndjson",
        "raw_path": b"/export.ndjson",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"almanac.test")],
        "client": (address, 50000),
        "server": ("almanac.test", 80),
    }
    task = asyncio.create_task(app(scope, receive, send))
    await asyncio.wait_for(started.wait(), timeout=60)
    return HeldExport(task, started, gone, messages)


async def test_one_export_per_client_and_a_few_in_all(store: Store, calls: Counter[str]) -> None:
    app = app_with(store, max_concurrent_exports=2)
    first = await held_export(app, "10.0.0.1")
    assert first.messages[0]["status"] == 200
    calls.clear()
    async with http_client(app, "10.0.0.1") as same, http_client(app, "10.0.0.3") as third:
        again = await same.get("/export.ndjson")
        assert again.status_code == 429
        assert again.json()["errors"][0]["extensions"]["code"] == "THROTTLED"
        assert int(again.headers["retry-after"]) > 0
        second = await held_export(app, "10.0.0.2")  # another client: there is room for two
        over = await third.get("/export.ndjson")
        assert over.status_code == 503
        assert over.json()["errors"][0]["extensions"]["code"] == "SERVICE_UNAVAILABLE"
        assert int(over.headers["retry-after"]) > 0
        assert calls["item_counts"] == 1  # the second's: neither refusal counted anything
        # A client gone mid-export gives its slot back; so does one whose export ended.
        first.leave()
        await asyncio.wait_for(first.task, timeout=60)
        assert (await same.get("/export.ndjson")).status_code == 200
        second.leave()
        await asyncio.wait_for(second.task, timeout=60)
        assert (await third.get("/export.ndjson")).status_code == 200
    await app.services.shared.budgets.close()


async def test_an_export_streams_as_it_reads_a_batch_at_a_time(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The response's lines go out between the store's batches: the first line is sent before
    the last benchmarks are read, and no batch holds more than the batch size."""
    monkeypatch.setattr(editing.export, "EXPORT_BATCH", 2)
    events: list[tuple[str, int]] = []
    reading = store.documents_in_batches

    async def logged(collection: Collection, size: int) -> AsyncIterator[list[Any]]:
        async for batch in reading(collection, size):
            events.append((f"read {collection}", len(batch)))
            yield batch

    monkeypatch.setattr(store, "documents_in_batches", logged)
    app = app_with(store)
    sent: list[bytes] = []
    asked = asyncio.Event()

    async def receive() -> Message:
        if not asked.is_set():
            asked.set()
            return {"type": "http.request", "body": b"", "more_body": False}
        await asyncio.Event().wait()  # the client stays until the response ends
        raise AssertionError("unreachable")

    async def send(message: Message) -> None:
        if message.get("body"):
            events.append(("sent", len(message["body"])))
            sent.append(message["body"])

    scope = {
        "type": "http",
        "method": "GET",
        "path": "/export.ndjson",
        "raw_path": b"/export.ndjson",
        "query_string": b"",
        "headers": [],
        "client": ("127.0.0.1", 50000),
        "server": ("almanac.test", 80),
        "scheme": "http",
        "root_path": "",
        "http_version": "1.1",
        "asgi": {"version": "3.0"},
    }
    await app(scope, receive, send)
    await app.services.shared.budgets.close()

    benchmark_batches = [index for index, (what, _) in enumerate(events) if what.endswith("marks")]
    first_sent = next(index for index, (what, _) in enumerate(events) if what == "sent")
    assert len(benchmark_batches) == 6  # 11 benchmarks, 2 a batch
    assert first_sent < benchmark_batches[-1]
    assert all(size <= 2 for what, size in events if what.startswith("read"))
    lines = [json.loads(line) for line in b"".join(sent).decode().splitlines()]
    slugs = [line["benchmarks"][0]["slug"] for line in lines if "benchmarks" in line]
    assert len(slugs) == len(set(slugs)) == 11


async def test_exported_counts_are_what_the_export_holds(store: Store) -> None:
    counts = await store.item_counts()
    dataset = await export_dataset(store)
    held = {section: len(dataset[section]) for section in ("labs", "categories", "models")}
    assert held == {"labs": counts.labs, "categories": counts.categories, "models": counts.models}
    assert len(dataset["benchmarks"]) == counts.benchmarks == 11
