"""No client can grow the server's memory: repeated refusals hold nothing, and what is cached
stays within its configured bytes, whatever the documents and variables sent."""

import gc
import tracemalloc
from typing import Any

import httpx
import pytest

from server.app import AlmanacApp
from server.settings import Settings

CACHES = {"document_cache_bytes": 500_000, "cost_cache_bytes": 100_000}
ANSWERS = 500_000


@pytest.fixture
def settings() -> Settings:
    return Settings(
        response_cache_bytes=ANSWERS,
        document_cache_bytes=CACHES["document_cache_bytes"],
        cost_cache_bytes=CACHES["cost_cache_bytes"],
        anonymous_bucket_capacity=1_000_000,
        anonymous_restore_rate=1,
    )


async def grown(app: AlmanacApp, client: httpx.AsyncClient, bodies: list[dict[str, Any]]) -> int:
    """Bytes still held after sending `bodies` (after the first tenth, to warm up). The request
    log and the metrics note up to 256 requests before writing them (a bounded buffer, emptied
    every 0.25 s by the running server): they are written out first."""
    warm = len(bodies) // 10
    for body in bodies[:warm]:
        await client.post("/graphql", json=body)
    tracemalloc.start()
    try:
        gc.collect()  # What the client let go of, in cycles, is not the server's memory.
        before, _ = tracemalloc.get_traced_memory()
        for body in bodies[warm:]:
            assert (await client.post("/graphql", json=body)).status_code == 200
        assert app.services.request_log is not None
        assert app.services.request_metrics is not None
        app.services.request_log.flush()
        app.services.request_metrics.fold()
        gc.collect()
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return after - before


async def test_a_repeated_refusal_costs_no_memory(
    app: AlmanacApp, client: httpx.AsyncClient
) -> None:
    body = {"query": "{ nosuchfield }", "variables": {"unused": "x" * 95_000}}
    held = await grown(app, client, [body] * 150)
    assert held < 100_000, held  # 135 refusals of a 95 KB request: nothing kept


async def test_unique_documents_stay_within_the_cache_budgets(
    app: AlmanacApp, client: httpx.AsyncClient
) -> None:
    bodies = [{"query": f"#{i:06} {'c' * 90_000}\n{{ __typename }}"} for i in range(66)]
    held = await grown(app, client, bodies)
    budget = sum(CACHES.values()) + ANSWERS
    assert held < budget + 300_000, held  # some 6 MB of distinct documents sent
