"""`almanac serve`: the API under Uvicorn, after the settings, the address and the store have
been checked (each refusal one line and exit code 2, before anything starts)."""

import logging
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager

import click
import uvicorn
from prometheus_client import start_http_server

from server.cli.store_access import configured, refuse_configuration, run_on_database
from server.observability import log_config, registry, shared_by_workers
from server.settings import LOCAL_ORIGINS, Settings
from server.transport import GuardedHttpToolsProtocol, raise_descriptor_limit


@click.command(help="Serve the GraphQL API (GraphiQL at /graphql in a browser).")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535))
@click.option("--workers", default=1, show_default=True, type=click.IntRange(min=1))
@click.option(
    "--allow-local-origins",
    is_flag=True,
    help="Let pages from http://localhost:* and http://127.0.0.1:* call the API from a browser "
    "(what `./dev serve` does), unless ALMANAC_CORS_ORIGIN_REGEX says otherwise.",
)
def serve(host: str, port: int, workers: int, allow_local_origins: bool) -> None:
    if allow_local_origins:
        # The app is made from the environment, in each worker: the setting goes there.
        os.environ.setdefault("ALMANAC_CORS_ORIGIN_REGEX", LOCAL_ORIGINS)
    settings = configured()
    if settings.metrics_port == port:
        refuse_configuration([f"ALMANAC_METRICS_PORT: {port} is the API's own port (--port)"])
    refuse_unless_bindable(host, port)
    # The store is opened (and a new one seeded) here first, so that a store that cannot be
    # opened is one line and exit code 2, not the app's start-up failing with a traceback.
    run_on_database(lambda store: store.ping())
    click.echo(f"GraphiQL: http://{host}:{port}/graphql  (POST GraphQL requests to the same URL)")
    click.echo(f"CORS: {allowed_origins(settings)}")
    if workers > 1 and settings.redis_url is None:
        logging.getLogger("almanac").warning(
            "Budgets are per worker without ALMANAC_REDIS_URL: each of the %d workers meters "
            "clients on its own, so a client may spend up to %d times its budget (and hold as "
            "many times its open subscriptions).",
            workers,
            workers,
        )
    raise_descriptor_limit(settings.max_connections)
    with metrics_of_workers(workers, settings):
        uvicorn.run(
            "server.app:app_from_environment",
            factory=True,
            host=host,
            port=port,
            workers=workers,
            log_level=settings.log_level,
            log_config=log_config(settings),
            access_log=False,  # server.observability.logs writes one richer line per request
            proxy_headers=True,
            forwarded_allow_ips=settings.forwarded_allow_ips,
            http=GuardedHttpToolsProtocol,
            timeout_keep_alive=settings.keep_alive_timeout_seconds,
            timeout_graceful_shutdown=settings.shutdown_timeout_seconds,
            # A WebSocket message is held to the body limit (decompressed: Uvicorn applies
            # it after per-message-deflate), refused before it is read whole.
            ws_max_size=settings.max_body_bytes,
        )


def refuse_unless_bindable(host: str, port: int) -> None:
    """One line and exit code 2 if the address cannot be listened on (a port in use, a host
    not of this machine): found before a new data directory is seeded and its admin key made,
    not by Uvicorn once the app has started. The socket is bound as Uvicorn binds it."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
    except OSError as error:
        click.echo(f"Cannot serve on {host}:{port}: {error.strerror}.", err=True)
        raise SystemExit(2) from None


@contextmanager
def metrics_of_workers(workers: int, settings: Settings) -> Iterator[None]:
    """With several workers (on either store), their metrics in prometheus-client's
    multiprocess mode, in a directory made for them and removed when they end; and the
    metrics' own port, if one is set, served here by the process that runs them."""
    if workers == 1 or not settings.metrics:
        yield
        return
    with shared_by_workers():
        if settings.metrics_port is not None:
            try:
                start_http_server(settings.metrics_port, registry=registry())
            except OSError as error:
                refuse_configuration(
                    [f"ALMANAC_METRICS_PORT: {settings.metrics_port} ({error.strerror})"]
                )
        yield


def allowed_origins(settings: Settings) -> str:
    """Which browser origins may call the API, in words, for the start-up lines."""
    allowed = [*settings.cors_origins]
    if settings.cors_origin_regex is not None:
        allowed.append(
            "http://localhost:* and http://127.0.0.1:*"
            if settings.cors_origin_regex == LOCAL_ORIGINS
            else f"origins matching {settings.cors_origin_regex}"
        )
    if not allowed:
        return "no browser origin may call this API (set ALMANAC_CORS_ORIGINS)"
    return "browsers may call this API from " + ", ".join(allowed)
