"""The SDL is served at a stable address, the same as the committed schema.graphql."""

from pathlib import Path

import httpx

COMMITTED = Path(__file__).parents[3] / "schema.graphql"


async def test_sdl_is_served_and_revalidates(client: httpx.AsyncClient) -> None:
    response = await client.get("/schema.graphql")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    assert response.text == COMMITTED.read_text(encoding="utf-8")
    again = await client.get("/schema.graphql", headers={"If-None-Match": response.headers["ETag"]})
    assert again.status_code == 304
