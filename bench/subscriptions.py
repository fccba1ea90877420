"""Subscription fan-out: how fast one `almanac serve` process sends each change to many
subscribers over graphql-transport-ws, on this machine.

`SUBSCRIBERS` gql clients (in this process) subscribe to `changes`; then `CHANGES` writes are
made over HTTP one after another (an admin key's `updateModel`). Measured: events delivered a
second (subscribers x changes / the time from the first write to the last event received),
and the delay from each write's request to each subscriber's receipt of its change (p50, p99).
The writes go one after another, so events a second is bounded by the write rate as much as
by the fan-out; the subscribers run in this process, and share its core. Nothing here leaves
127.0.0.1.

    .venv/bin/python bench/subscriptions.py [--subscribers 100] [--changes 50]

Measured 2026-12-02 on the 2-core machine shared with other work (embedded store, defaults):
100 subscribers x 50 changes: ~1,900 events a second, delay p50 39 ms, p99 134 ms; 10
subscribers: ~500 events a second (the writes' pace), p50 16 ms, p99 40 ms.
"""

import argparse
import asyncio
import statistics
import time
from typing import Any

import httpx
from gql import Client, GraphQLRequest
from gql.transport.websockets import WebsocketsTransport

from tests.conftest import live_almanac

SUBSCRIBE = """subscription($after: String) { changes(after: $after) { sequence kind slug } }"""
UPDATE = """mutation($rank: Int!) {
  updateModel(slug: "qwen-14b", input: {capabilityIndexRank: $rank}) { revision } }"""
NEWEST = "{ changes(first: 1) { newestCursor } }"
UNREFUSING = {
    "anonymous_bucket_capacity": "1000000000",
    "anonymous_restore_rate": "1000000000",
    "key_bucket_capacity": "1000000000",
    "key_restore_rate": "1000000000",
    "max_subscriptions_anonymous": "100000",
}


async def subscriber(
    url: str, after: str, count: int, ready: asyncio.Event, received: list[float]
) -> None:
    transport = WebsocketsTransport(url=url.replace("http", "ws", 1) + "/graphql")
    async with Client(transport=transport) as session:
        ready.set()
        request = GraphQLRequest(SUBSCRIBE, variable_values={"after": after})
        async for _ in session.subscribe(request):
            received.append(time.perf_counter())
            if len(received) == count:
                return


async def fan_out(url: str, key: str, subscribers: int, changes: int) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=url, timeout=60) as http:
        after = (await http.post("/graphql", json={"query": NEWEST})).json()["data"]["changes"][
            "newestCursor"
        ]
        readies = [asyncio.Event() for _ in range(subscribers)]
        receipts: list[list[float]] = [[] for _ in range(subscribers)]
        tasks = [
            asyncio.create_task(subscriber(url, after, changes, ready, got))
            for ready, got in zip(readies, receipts, strict=True)
        ]
        for ready in readies:
            await ready.wait()
        await asyncio.sleep(1)  # each subscription reaches the server before the first write
        written: list[float] = []
        started = time.perf_counter()
        for rank in range(changes):
            written.append(time.perf_counter())
            answer = await http.post(
                "/graphql",
                json={"query": UPDATE, "variables": {"rank": 1000 + rank}},
                headers={"Authorization": f"Bearer {key}"},
            )
            assert "errors" not in answer.json(), answer.text
        await asyncio.wait_for(asyncio.gather(*tasks), 300)
    last = max(got[-1] for got in receipts)
    delays = sorted(got[i] - written[i] for got in receipts for i in range(changes))
    return {
        "subscribers": subscribers,
        "changes": changes,
        "events_per_second": round(subscribers * changes / (last - started)),
        "delay_p50_ms": round(statistics.median(delays) * 1000, 1),
        "delay_p99_ms": round(delays[int(len(delays) * 0.99) - 1] * 1000, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subscribers", type=int, default=100)
    parser.add_argument("--changes", type=int, default=50)
    options = parser.parse_args()
    with live_almanac(**UNREFUSING) as (url, key):
        print(asyncio.run(fan_out(url, key, options.subscribers, options.changes)))


if __name__ == "__main__":
    main()
