"""Liveness and readiness, for load balancers and orchestrators."""

import httpx
import pytest

from store import Store


async def test_healthz(client: httpx.AsyncClient) -> None:
    response = await client.get("/healthz")
    assert (response.status_code, response.json()) == (200, {"status": "ok"})


async def test_readyz_follows_the_database(
    client: httpx.AsyncClient, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert (await client.get("/readyz")).json() == {"status": "ready"}

    async def unreachable() -> None:
        raise ConnectionError("no route to database")

    monkeypatch.setattr(store, "ping", unreachable)
    response = await client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["status"] == "unavailable"
