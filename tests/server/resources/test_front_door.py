"""`/`: a page for people, JSON for API clients, each leading to what is there."""

import html
from pathlib import Path

import httpx

from server.resources.guide_pages import guide_page

GENERAL = "code-interpreter-benchmark-general"
GUIDE = Path(__file__).parents[3] / "docs" / "partners.md"


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


async def test_a_browser_gets_the_guide_as_a_page(client: httpx.AsyncClient) -> None:
    """Rendered from the same Markdown (as CommonMark, so the sections are all there), with
    any HTML in it shown as text, and the Markdown a link away."""
    browser = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
    page = await client.get("/docs/partners.md", headers=browser)
    assert page.headers["content-type"].startswith("text/html")
    assert "Accept" in page.headers["vary"]
    markdown = GUIDE.read_text(encoding="utf-8")
    headings = [line[3:] for line in markdown.splitlines() if line.startswith("## ")]
    for heading in headings:
        assert f"<h2>{html.escape(heading, quote=False)}</h2>" in page.text, heading
    assert "<table>" in page.text
    assert "not run:" not in page.text  # the guides' notes to their tests stay out
    as_markdown = await client.get("/docs/partners.md?format=markdown", headers=browser)
    assert as_markdown.text == markdown
    asked = await client.get("/docs/partners.md", headers={"Accept": "text/markdown"})
    assert asked.text == markdown


def test_html_in_a_guide_is_shown_not_run(tmp_path: Path) -> None:
    guide = tmp_path / "guide.md"
    guide.write_text("# A guide\n\n<script>alert(1)</script>\n\nText with <b>tags</b>.\n")
    page = guide_page(guide, "/docs/guide.md?format=markdown")
    assert "<script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;b&gt;tags&lt;/b&gt;" in page


async def test_the_favicon_is_there(client: httpx.AsyncClient) -> None:
    icon = await client.get("/favicon.ico")
    assert icon.status_code == 200
    assert icon.headers["content-type"] == "image/svg+xml"
    assert icon.text.startswith("<svg")
