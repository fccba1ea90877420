"""The Starlette application: routes, GraphiQL's files, health checks, and the store's life."""

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from editing.importer import seed
from schema import schema
from server.api_keys import create_key
from server.errors import http_error
from server.graphiql import asset_endpoint
from server.graphql_view import AlmanacGraphQL
from server.response_cache import ResponseCache
from server.settings import Settings
from store.changes import follow_changes
from store.client import connect, prepare
from store.queries import Store

log = logging.getLogger("almanac")

READY_TIMEOUT_SECONDS = 2.0
EMBEDDED_ADMIN_KEY_NAME = "embedded-admin"


def create_app(settings: Settings, store: Store | None = None) -> Starlette:
    """The app. Without a `store`, it opens (and prepares) the configured one at start-up."""

    answers = (
        ResponseCache(settings.response_cache_bytes) if settings.response_cache_bytes else None
    )

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if store is None:
            app.state.store = await open_store(settings)
        opened: Store = app.state.store
        following = None
        if not opened.embedded:
            following = asyncio.create_task(follow_changes(opened.db, opened.version))
        yield
        if following is not None:
            following.cancel()

    app = Starlette(
        exception_handlers={HTTPException: refusal},
        routes=[
            Route("/graphql", AlmanacGraphQL(schema, settings, answers), methods=["GET", "POST"]),
            Route("/graphiql/{name}", asset_endpoint(settings.graphiql_packages)),
            Route("/healthz", healthz),
            Route("/readyz", readyz),
        ],
        lifespan=lifespan,
    )
    app.state.store = store
    return app


async def open_store(settings: Settings) -> Store:
    """The configured store, with its indexes; the embedded one filled and given a key."""
    opened = connect(settings.mongodb_uri, settings.mongodb_database)
    await prepare(opened)
    if not opened.embedded:
        log.info("Benchmark Almanac API on MongoDB database '%s'", opened.db.name)
        return opened
    summary = await seed(opened)
    log.info(
        "Benchmark Almanac API on the embedded in-process store (no ALMANAC_MONGODB_URI set; "
        "data lives only in this process), loaded with the bundled dataset: %s",
        summary.describe(),
    )
    # Keys made with the CLI live in a database this process cannot see: make one here.
    key = await create_key(opened, EMBEDDED_ADMIN_KEY_NAME, "admin")
    log.warning("Admin API key for this process only (its data is lost on exit): %s", key)
    return opened


def app_from_environment() -> Starlette:
    """Uvicorn's app factory: settings from ALMANAC_* variables."""
    return create_app(Settings())


async def healthz(request: Request) -> JSONResponse:
    """The process is alive and serving."""
    return JSONResponse({"status": "ok"})


async def readyz(request: Request) -> JSONResponse:
    """The database answers; a load balancer should send traffic here only while it does."""
    try:
        await asyncio.wait_for(request.app.state.store.ping(), READY_TIMEOUT_SECONDS)
    except Exception as error:
        log.warning("Not ready: the database did not answer a ping: %s", error)
        return JSONResponse(
            {"status": "unavailable", "reason": "the database did not answer"}, status_code=503
        )
    return JSONResponse({"status": "ready"})


async def refusal(request: Request, error: Exception) -> Response:
    """Unknown paths and methods get a GraphQL-shaped error too, not a bare page."""
    assert isinstance(error, HTTPException)
    return http_error(error.status_code, error.detail, headers=error.headers)
