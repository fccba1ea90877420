"""The HTTP server (Starlette app, GraphiQL, health) and the `almanac` command line."""
