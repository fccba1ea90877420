"""The Starlette application: its routes and middleware, on the services made for it
(server.services) and with its life (server.lifespan)."""

from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route, WebSocketRoute, request_response
from starlette.types import Receive, Scope, Send

from api_errors import INTERNAL_ERROR_MESSAGE
from schema import almanac_schema
from server.charges import Charges
from server.errors import http_error
from server.graphql import AlmanacGraphQL, asset_endpoint, schema_file
from server.lifespan import Lifespan
from server.min_change import CHANGE_CURSOR_HEADER
from server.min_change import HEADER as MIN_CHANGE
from server.observability import MetricsEndpoint, RequestIds, operation_tracing, request_tracing
from server.resources import (
    Downloads,
    Feeds,
    Readiness,
    Releases,
    eee_export,
    favicon,
    front_page,
    guide,
    healthz,
)
from server.services import AppServices, app_services
from server.settings import Settings
from server.transport import Drain
from store import Store


class AlmanacApp(Starlette):
    """The Starlette app, with the services it was made with (typed, for its tests and tools)."""

    def __init__(self, services: AppServices, **options: Any) -> None:
        super().__init__(**options)
        self.services = services


def create_app(
    settings: Settings, store: Store | None = None, tracer_provider: TracerProvider | None = None
) -> AlmanacApp:
    """The app. Without a `store`, it opens the configured one (prepared at start-up).
    With tracing on, spans go to `tracer_provider`, by default an OTLP exporter's."""
    services = app_services(settings, store, tracer_provider)
    drain = Drain(settings.shutdown_drain_seconds)
    view = graphql_view(services)
    served = routes(services, view, drain)
    app = AlmanacApp(
        services,
        exception_handlers={HTTPException: Refusals(settings), Exception: internal_error},
        routes=served,
        middleware=[
            *([request_tracing(services.tracing, served)] if services.tracing else []),
            Middleware(RequestIds, observers=services.observers),
            *cors(settings),
        ],
        lifespan=Lifespan(services, drain, view.subscriptions.close_all, view.refresher.run),
    )
    return app


def routes(
    services: AppServices, view: AlmanacGraphQL, drain: Drain
) -> list[Route | WebSocketRoute]:
    settings, shared = services.settings, services.shared
    downloads = Downloads(
        shared.store, Charges(settings, shared.budgets, shared.store), shared.graphql
    )
    feeds = Feeds(downloads)
    releases = Releases(downloads)
    metrics = services.request_metrics
    return [
        Route("/graphql", view, methods=["GET", "POST"]),
        WebSocketRoute("/graphql", view),  # subscriptions over graphql-transport-ws
        Route("/", front_page),
        Route("/docs/{name}.md", guide),
        Route("/favicon.ico", favicon),
        Route("/schema.graphql", schema_file),
        Route("/changes.atom", feeds.changes),
        Route("/benchmarks/{slug}.atom", feeds.benchmark),  # before the other formats
        Route("/benchmarks/{slug}.{format}", downloads.leaderboard),
        Route("/models/{slug}.csv", downloads.standings),
        Route("/export.ndjson", downloads.export),
        Route("/export.eee.jsonl", eee_export(downloads)),
        Route("/releases/{release_id}/{name:path}", releases.file),
        Route(
            "/graphiql/{name}",
            GZipMiddleware(request_response(asset_endpoint(settings.graphiql_packages))),
            methods=["GET"],  # (an app, not a function: Starlette would route every method)
        ),
        Route("/healthz", healthz),
        Route("/readyz", Readiness(shared.store, lambda: drain.started).endpoint),
        *(
            [Route("/metrics", MetricsEndpoint(metrics, services.sampled_gauges).endpoint)]
            if metrics is not None and not settings.metrics_port
            else []
        ),
    ]


def graphql_view(services: AppServices) -> AlmanacGraphQL:
    settings, tracing = services.settings, services.tracing
    if tracing is None:
        return AlmanacGraphQL(settings, services.shared)
    return AlmanacGraphQL(settings, services.shared, almanac_schema(operation_tracing(tracing)))


def cors(settings: Settings) -> list[Middleware]:
    """Browsers may call the API from the configured origins only (none by default). With
    some, every response goes through Starlette's CORS. With none, only a preflight needs an
    answer, a refusal that names CORS (`Refusals`): every other request goes straight on,
    through no layer that would do nothing for it."""
    if not allows_origins(settings):
        return []
    return [Middleware(GraphQLShapedCORSMiddleware, **cors_rules(settings))]


def allows_origins(settings: Settings) -> bool:
    return bool(settings.cors_origins) or settings.cors_origin_regex is not None


def cors_rules(settings: Settings) -> dict[str, Any]:
    return {
        "allow_origins": settings.cors_origins,
        "allow_origin_regex": settings.cors_origin_regex,
        "allow_methods": ["GET", "POST"],
        # Read-your-writes (issue 30): a page sends the cursor back and reads it, and `Age`.
        "allow_headers": ["Authorization", "Content-Type", "If-None-Match", MIN_CHANGE],
        "expose_headers": [
            "ETag",
            "Retry-After",
            "RateLimit-Limit",
            "RateLimit-Remaining",
            "RateLimit-Reset",
            CHANGE_CURSOR_HEADER,
            "Age",
        ],
        "max_age": 600,
    }


def app_from_environment() -> AlmanacApp:
    """Uvicorn's app factory: settings from ALMANAC_* variables."""
    return create_app(Settings())


async def internal_error(request: Request, error: Exception) -> Response:
    """A failure nothing else caught: GraphQL-shaped, with no detail (Uvicorn logs it)."""
    return http_error(500, INTERNAL_ERROR_MESSAGE)


class GraphQLShapedCORSMiddleware(CORSMiddleware):
    """Starlette's CORS, with its refusal of a preflight as a GraphQL-shaped error."""

    def preflight_response(self, request_headers: Headers) -> Response:
        response = super().preflight_response(request_headers)
        if response.status_code != 400:
            return response
        reason = bytes(response.body).decode()
        headers = {k: v for k, v in response.headers.items() if k.lower().startswith("access-")}
        return http_error(400, f"{reason}: this API does not allow that here.", headers)


class Refusals:
    """Unknown paths and methods get a GraphQL-shaped error too, not a bare page. With no
    origin allowed (the production default) no route takes a CORS preflight: it is refused as
    CORS, by Starlette's rules (`preflight_response`), so that a page on a dev server learns
    that CORS is the matter, not that OPTIONS is unknown."""

    def __init__(self, settings: Settings) -> None:
        self.preflights = (
            None
            if allows_origins(settings)
            else GraphQLShapedCORSMiddleware(unrouted, **cors_rules(settings))
        )

    async def __call__(self, request: Request, error: Exception) -> Response:
        assert isinstance(error, HTTPException)
        headers = request.headers
        if (
            self.preflights is not None
            and request.method == "OPTIONS"
            and "origin" in headers
            and "access-control-request-method" in headers
        ):
            return self.preflights.preflight_response(headers)
        return http_error(error.status_code, error.detail, headers=error.headers)


async def unrouted(scope: Scope, receive: Receive, send: Send) -> None:
    """What `Refusals`' CORS rules would pass a request on to: none is (only their answer to a
    preflight is asked for)."""
    raise RuntimeError("Refusals' CORS rules answer preflights only")
