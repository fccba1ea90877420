"""The server: the API over HTTP and WebSockets, and the `almanac` command line.

Its rooms, each importing only those below it (import-linter checks it, pyproject.toml):
- `cli/`: the `almanac` command (serve, keys, data, schema, config);
- `app.py`: the Starlette app, its routes and middleware; `lifespan.py`: what runs beside the
  requests (the store made ready, background tasks, the drain);
- `services.py`: every per-app object, made once and handed to what needs it;
- `graphql/` (the GraphQL endpoint: view, request reading and its body limit, admission, persisted
  queries, subscriptions) and
  `resources/` (downloads, feeds, the front door, health), side by side;
- `charges.py`: what a request costs, every charge made;
- `observability/` (logs, request log, metrics, tracing), `api_keys.py`, `http_caching.py`;
- the request record (`exchange.py`), `errors.py`, `configuration.py`, `transport/` (Uvicorn's
  protocol and the drain: only the app, its lifespan and the command use it);
- `settings.py`, and `manifests.py` (the trusted documents' form) beneath it.

Nothing outside imports the server: it is entered by Uvicorn (`server.app:app_from_environment`)
and by the command (`server.cli:main`).
"""

__all__: list[str] = []
