"""`/`: a page for people, JSON for API clients, each leading to what is there."""

import httpx

GENERAL = "code-interpreter-benchmark-general"


async def test_people_get_a_page_that_leads_everywhere(client: httpx.AsyncClient) -> None:
    browser = {"Accept": "text/html,application/xhtml+xml"}
    response = await client.get("/", headers=browser)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    for link in ("/graphql", "/schema.graphql", "/docs/partners.md", f"/benchmarks/{GENERAL}.csv"):
        assert f'href="{link}"' in response.text
        assert (await client.get(link, headers=browser)).status_code == 200, link


async def test_api_clients_get_json_links(client: httpx.AsyncClient) -> None:
    body = (await client.get("/")).json()
    assert body["name"] == "Benchmark Almanac API"
    links = body["links"]
    assert links["graphql"] == "/graphql"
    for name in ("schema", "partnerGuide", "editorGuide", "health"):
        assert (await client.get(links[name])).status_code == 200, name
    download = links["leaderboardDownload"].format(slug=GENERAL)
    assert (await client.get(download)).status_code == 200


async def test_the_guides_are_served_as_written(client: httpx.AsyncClient) -> None:
    guide = await client.get("/docs/partners.md")
    assert guide.headers["content-type"] == "text/markdown; charset=utf-8"
    assert guide.text.startswith("# Benchmark Almanac API: partner guide")
    missing = await client.get("/docs/secrets.md")
    assert missing.status_code == 404
    assert missing.json()["errors"][0]["extensions"]["code"] == "NOT_FOUND"
