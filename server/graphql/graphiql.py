"""GraphiQL, served with its scripts and styles from this app: it works with no internet."""

import json
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, Response

from api_errors import shown
from server.errors import http_error

log = logging.getLogger("almanac")

# The files GraphiQL needs, each from its npm package (installed by `npm ci` in server/graphiql).
ASSETS = {
    "react.js": "react/umd/react.production.min.js",
    "react-dom.js": "react-dom/umd/react-dom.production.min.js",
    "graphiql.js": "graphiql/graphiql.min.js",
    "graphiql.css": "graphiql/graphiql.min.css",
}

EXAMPLE_QUERY = """\
# The Benchmark Almanac API. Press the run button (or Ctrl-Enter) to run this query;
# open the docs (book icon) to browse every type and field.
query BenchmarkPage {
  benchmark(slug: "code-interpreter-benchmark-general") {
    name
    leader { modelName score }
    trackedLeader { modelName score }
    leaderboard { rank modelName tracked score setting }
    siblings(first: 6) { totalCount nodes { name trackedLeader { modelName score } } }
  }
}
"""

PAGE = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Benchmark Almanac API · GraphiQL</title>
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <link rel="stylesheet" href="/graphiql/graphiql.css">
  <style>body {{ margin: 0; height: 100vh; }} #graphiql {{ height: 100vh; }}</style>
</head>
<body>
  <div id="graphiql">Loading GraphiQL…</div>
  <script src="/graphiql/react.js"></script>
  <script src="/graphiql/react-dom.js"></script>
  <script src="/graphiql/graphiql.js"></script>
  <script>
    const fetcher = GraphiQL.createFetcher({{ url: window.location.origin + "/graphql" }});
    ReactDOM.createRoot(document.getElementById("graphiql")).render(
      React.createElement(GraphiQL, {{ fetcher, defaultQuery: {query} }})
    );
  </script>
</body>
</html>
"""

MISSING = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>GraphiQL is not installed</title></head>
<body>
<h1>GraphiQL's files are not installed</h1>
<p>The API works: POST GraphQL requests to this address. To explore it in the browser, install
GraphiQL's files with <code>npm ci --prefix server/graphiql</code> (the README's setup does this)
and reload. (The server's log says where it looked.)</p>
</body></html>
"""


def graphiql_page(packages: Path) -> HTMLResponse:
    if not all((packages / path).is_file() for path in ASSETS.values()):
        # The folder is the server's business: it goes to the log, never to the client.
        log.warning("GraphiQL's files are not in %s (ALMANAC_GRAPHIQL_PACKAGES)", packages)
        return HTMLResponse(MISSING)
    # A JSON string is a JavaScript string; escaping "<" keeps it from closing the script.
    query = json.dumps(EXAMPLE_QUERY).replace("<", "\\u003c")
    return HTMLResponse(PAGE.format(query=query))


def asset_endpoint(packages: Path) -> Callable[[Request], Awaitable[Response]]:
    async def asset(request: Request) -> Response:
        path = ASSETS.get(request.path_params["name"])
        if path is None or not (packages / path).is_file():
            return http_error(
                404, f"GraphiQL has no file named {shown(request.path_params['name'])}."
            )
        return FileResponse(packages / path, headers={"Cache-Control": "public, max-age=86400"})

    return asset
