"""`/`: what this is, for people (a small HTML page) and for API clients (JSON), with the way to
GraphiQL, the schema, the guides and the downloads; and the guides themselves, under `/docs/`."""

import html
from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response

from server.errors import http_error
from server.resources.guide_pages import guide_page

# In a checkout the guides are the repository's docs/; an installed wheel carries them in
# server/docs (pyproject.toml's force-include).
PACKAGED_GUIDES = Path(__file__).parents[1] / "docs"
GUIDES = PACKAGED_GUIDES if PACKAGED_GUIDES.is_dir() else Path(__file__).parents[2] / "docs"
LINKS = {
    "graphql": "/graphql",
    "schema": "/schema.graphql",
    "partnerGuide": "/docs/partners.md",
    "editorGuide": "/docs/editors.md",
    "leaderboardDownload": "/benchmarks/{slug}.csv",
    "leaderboardJson": "/benchmarks/{slug}.json",
    "modelDownload": "/models/{slug}.csv",
    "export": "/export.ndjson",
    "changesFeed": "/changes.atom",
    "benchmarkFeed": "/benchmarks/{slug}.atom",
    "health": "/healthz",
    "ready": "/readyz",
}
ABOUT = (
    "The GraphQL API of the Benchmark Almanac: AI benchmarks, their leaderboards, and the "
    "models we track."
)
PAGE = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Benchmark Almanac API</title>
<link rel="icon" href="/favicon.ico" type="image/svg+xml">
<link rel="alternate" href="/changes.atom" type="application/atom+xml" title="Changes">
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}}
code{{background:#f3f3f3;padding:0 .2em}}</style></head>
<body>
<h1>Benchmark Almanac API</h1>
<p>{about}</p>
<ul>
<li><a href="/graphql">GraphiQL</a>: explore the data and the schema in your browser.
  API clients send GraphQL to <code>POST /graphql</code>.</li>
<li><a href="/schema.graphql">The schema</a> (SDL), for code generators.</li>
<li><a href="/docs/partners.md">The partner guide</a>: keys, costs and budgets, paging,
  persisted queries, ETags, errors. <a href="/docs/editors.md">The editor guide</a>: keeping the
  almanac current.</li>
<li>Downloads of what a page shows: <code>/benchmarks/{{slug}}.csv</code> (or <code>.json</code>),
  e.g. <a href="/benchmarks/{example}.csv">/benchmarks/{example}.csv</a>, and
  <code>/models/{{slug}}.csv</code>; everything, in the import format:
  <a href="/export.ndjson">/export.ndjson</a>.</li>
<li>What changed, as feeds to subscribe to: <a href="/changes.atom">/changes.atom</a>, and each
  benchmark's, e.g. <a href="/benchmarks/{example}.atom">/benchmarks/{example}.atom</a>.</li>
</ul>
</body>
</html>
"""
EXAMPLE = "code-interpreter-benchmark-general"


async def front_page(request: Request) -> Response:
    if "text/html" in request.headers.get("accept", ""):
        return HTMLResponse(PAGE.format(about=html.escape(ABOUT), example=EXAMPLE))
    return JSONResponse({"name": "Benchmark Almanac API", "about": ABOUT, "links": LINKS})


async def guide(request: Request) -> Response:
    """A guide: a web page for a browser (which asks for HTML), its Markdown for anyone else."""
    name = request.path_params["name"]
    path = GUIDES / f"{name}.md"
    if name not in ("partners", "editors") or not path.is_file():
        return http_error(404, f"There is no guide named {name!r}: see /docs/partners.md.")
    headers = {"Vary": "Accept"}
    as_markdown = request.query_params.get("format") == "markdown"
    if not as_markdown and prefers_html(request.headers.get("accept", "")):
        page = guide_page(path, f"{request.url.path}?format=markdown")
        return HTMLResponse(page, headers=headers)
    return FileResponse(path, media_type="text/markdown; charset=utf-8", headers=headers)


def prefers_html(accept: str) -> bool:
    """A browser's Accept names text/html; a client asking for Markdown (or anything, `*/*`)
    gets the Markdown."""
    wanted = [part.split(";")[0].strip() for part in accept.split(",")]
    return "text/html" in wanted and "text/markdown" not in wanted


# The almanac's mark: a bar chart, as SVG (every current browser takes an SVG favicon).
FAVICON = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16">'
    '<rect width="16" height="16" rx="3" fill="#1f3a5f"/>'
    '<rect x="3" y="8" width="2.5" height="5" fill="#fff"/>'
    '<rect x="6.75" y="5" width="2.5" height="8" fill="#fff"/>'
    '<rect x="10.5" y="3" width="2.5" height="10" fill="#f2b134"/></svg>'
)


async def favicon(request: Request) -> Response:
    return Response(
        FAVICON,
        media_type="image/svg+xml",
        headers={"Cache-Control": "public, max-age=86400"},
    )
