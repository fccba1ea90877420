"""The `almanac` command: serve the API; seed, import into and export the store (MongoDB, or
the embedded one); manage API keys; export the schema."""

import asyncio
import getpass
import json
import logging
import os
import socket
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import NoReturn, TypeVar

import click
import uvicorn
from prometheus_client import start_http_server

from editing import (
    ImportSummary,
    InvalidInput,
    Stamp,
    control_character,
    counted,
    ensure_seeded,
    import_dataset,
    item_count,
    read_dataset,
    seed,
    write_export,
)
from request_limits import BucketPolicy
from schema import breaking_changes, document_problems, published_sdl
from server.api_keys import (
    ADMIN_KEY_FILE,
    SCOPES,
    create_key,
    in_force,
    revoke_key,
    set_budget,
)
from server.app import benchmark_count
from server.configuration import (
    ConfigurationError,
    effective_configuration,
    load_settings,
    unknown_variables,
)
from server.graphql.persisted import manifest_documents, trusted_manifest
from server.observability.logs import log_config, printable
from server.observability.metrics import registry
from server.observability.worker_metrics import shared_by_workers
from server.settings import LOCAL_ORIGINS, Settings
from server.transport.http_protocol import GuardedHttpToolsProtocol, raise_descriptor_limit
from store import Store, StoreUnavailable, WriteFailed, connect, prepare

T = TypeVar("T")

SCHEMA_FILE = Path("schema.graphql")
CONTRACT_DIR = Path("contract")


@click.group(help="The Benchmark Almanac API. Configuration comes from ALMANAC_* variables.")
@click.version_option(package_name="benchmark-almanac-api", prog_name="almanac")
def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s:     %(name)s: %(message)s")


@main.command(help="Serve the GraphQL API (GraphiQL at /graphql in a browser).")
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


def configured() -> Settings:
    """The settings, every one checked; or each bad one named, and exit code 2."""
    try:
        settings = load_settings()
    except ConfigurationError as error:
        refuse_configuration(error.problems)
    for name in unknown_variables():
        logging.getLogger("almanac").warning("%s is no setting: ignored (misspelt?)", name)
    return settings


def refuse_configuration(problems: list[str]) -> NoReturn:
    click.echo("Configuration refused; nothing was started:", err=True)
    for problem in problems:
        click.echo(f"  {problem}", err=True)
    raise SystemExit(2)


@main.command("config", help="Print the effective configuration (secrets masked), checked.")
@click.option("--json", "as_json", is_flag=True, help="As one JSON object of variable to value.")
def show_config(as_json: bool) -> None:
    rows = effective_configuration(configured())
    if as_json:
        click.echo(json.dumps({name: value for name, value, _ in rows}, indent=1))
        return
    width = max(len(name) for name, _, _ in rows)
    for name, value, source in rows:
        click.echo(f"{name:<{width}}  {value}{'' if source == 'default' else '  (set)'}")


def open_database(settings: Settings) -> Store:
    """The configured store: the MongoDB at ALMANAC_MONGODB_URI, or else the embedded one in
    ALMANAC_DATA_DIR (also while a server runs on it)."""
    return connect(
        settings.mongodb_uri,
        settings.mongodb_database,
        settings.data_dir,
        timeout_seconds=settings.mongodb_timeout_seconds,
        retention=timedelta(days=settings.change_retention_days),
    )


def run_on_database(work: Callable[[Store], Awaitable[T]], *, seeding: bool = True) -> T:
    """`work` on the configured store, opened and prepared, and seeded first if it is a new
    data directory (or a seed was cut short); a store that cannot be opened is one line on
    stderr and exit code 2."""

    async def run() -> T:
        store = open_database(configured())
        try:
            await prepare(store)
            if seeding and (summary := await ensure_seeded(store)):
                click.echo(f"Loaded the bundled dataset: {summary.describe()}.", err=True)
            return await work(store)
        finally:
            await store.close()

    try:
        return asyncio.run(run())
    except StoreUnavailable as error:
        click.echo(str(error), err=True)
        raise SystemExit(2) from None


@main.command("seed", help="Load the bundled dataset into the configured store (idempotent).")
def seed_database() -> None:
    summary = run_on_database(seed, seeding=False)
    click.echo(f"Seeded: {summary.describe()}.")


@main.group(help="Create, list and revoke API keys (`Authorization: Bearer <key>`).")
def keys() -> None:
    pass


def budget_options(command: Callable[..., None]) -> Callable[..., None]:
    """--capacity and --restore-rate: a key's own budget instead of the configured one."""
    command = click.option(
        "--restore-rate",
        type=click.FloatRange(min=0, min_open=True, max=1e9),
        help="Points the key's bucket regains a second (with --capacity).",
    )(command)
    return click.option(
        "--capacity",
        type=click.IntRange(min=1),
        help="Points the key's bucket holds, at least the most a request may cost.",
    )(command)


def chosen_budget(capacity: int | None, restore_rate: float | None) -> BucketPolicy | None:
    if capacity is None and restore_rate is None:
        return None
    if capacity is None or restore_rate is None:
        raise click.UsageError("Give both --capacity and --restore-rate, or neither.")
    maximum = configured().max_query_cost
    if capacity < maximum:
        raise click.UsageError(
            f"--capacity {capacity} is below the most a request may cost ({maximum}): "
            "requests allowed by cost could never run."
        )
    return BucketPolicy(capacity, restore_rate)


def describe_budget(budget: BucketPolicy | None) -> str:
    if budget is None:
        return "configured budget"
    return f"budget {budget.capacity} points, +{budget.restore_rate:g}/s"


@keys.command("create", help="Create a key and print it: its secret is shown only this once.")
@click.option("--name", required=True, help="Who or what uses the key; recorded with changes.")
@click.option("--scope", type=click.Choice(SCOPES), required=True, help="admin may write.")
@budget_options
def create_api_key(name: str, scope: str, capacity: int | None, restore_rate: float | None) -> None:
    budget = chosen_budget(capacity, restore_rate)
    try:
        key = run_on_database(lambda store: create_key(store, name, scope, budget))
    except ValueError as error:
        raise click.UsageError(str(error)) from error
    click.echo(key)
    click.echo(
        f"Key {name!r} ({scope}, {describe_budget(budget)}) created. "
        "Keep it safe: it cannot be shown again.",
        err=True,
    )


@keys.command("list", help="List keys: name, scope, budget, created, revoked (never secrets).")
def list_api_keys() -> None:
    for doc in run_on_database(lambda store: store.api_keys()):
        budget = BucketPolicy(**doc["budget"]) if "budget" in doc else None
        revoked = f"revoked {doc['revoked_at']}" if doc["revoked_at"] else "in force"
        click.echo(  # a name stored before names were checked is shown escaped
            f"{printable(doc['name'])}\t{doc['scope']}\t{describe_budget(budget)}\t"
            f"created {doc['created_at']}\t{revoked}"
        )


@keys.command(
    "budget",
    help="Give a key its own budget (--capacity and --restore-rate), or the configured one "
    "again (neither). It applies from the key's next request.",
)
@click.argument("name")
@budget_options
def set_api_key_budget(name: str, capacity: int | None, restore_rate: float | None) -> None:
    budget = chosen_budget(capacity, restore_rate)
    if not run_on_database(lambda store: set_budget(store, name, budget)):
        raise click.ClickException(f"No key named {name!r} is in force.")
    click.echo(f"Key {name!r} now has the {describe_budget(budget)}.")


@keys.command("revoke", help="Revoke a key by name: it stops working on the next request.")
@click.argument("name")
def revoke_api_key(name: str) -> None:
    if not run_on_database(lambda store: revoke_key(store, name)):
        raise click.ClickException(f"No key named {name!r} is in force.")
    click.echo(f"Key {name!r} revoked.")


@main.command(
    "admin-key",
    help="Print the embedded store's admin API key (kept in ALMANAC_DATA_DIR/admin-key, made "
    "at the server's first start there).",
)
def show_admin_key() -> None:
    settings = configured()
    if settings.mongodb_uri:
        raise click.ClickException(
            "On MongoDB no admin key is kept: make one with `almanac keys create --scope admin`."
        )
    kept = settings.data_dir / ADMIN_KEY_FILE
    if not kept.is_file():
        raise click.ClickException(
            f"No admin key is kept in {kept}: `almanac serve` makes one at its first start."
        )
    key = run_on_database(lambda store: in_force(store, kept))
    if key is None:
        raise click.ClickException(
            f"The key kept in {kept} was revoked or is unknown here: `almanac serve` replaces "
            "it at its next start."
        )
    click.echo(key)


@main.command("import", help="Import a JSON (everything) or CSV (leaderboard rows) file.")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--dry-run", is_flag=True, help="Check and report what would change; write nothing.")
@click.option(
    "--allow-removals",
    is_flag=True,
    help="Reads may leave out rows of the current leaderboards (their sources dropped them).",
)
@click.option(
    "--by",
    default=lambda: f"cli:{getpass.getuser()}",
    show_default="cli:<user>",
    help="Who the changes are recorded as.",
)
def import_file(file: Path, dry_run: bool, allow_removals: bool, by: str) -> None:
    if (problem := control_character(by)) is not None:
        raise click.BadParameter(problem, param_hint="--by")
    try:
        dataset = read_dataset(file)
    except InvalidInput as error:
        raise click.ClickException(f"{file} cannot be imported: {error}") from error
    except OSError as error:
        raise click.ClickException(f"{file} cannot be read: {error.strerror}") from error

    async def work(store: Store) -> ImportSummary:
        began = time.monotonic()

        def throughput(done: int | None) -> str:
            seconds = time.monotonic() - began
            return f"{(done or 0) / seconds:,.0f} items/s" if seconds > 0 else ""

        with click.progressbar(
            length=item_count(dataset),
            label="Importing",
            file=sys.stderr,
            item_show_func=throughput,
        ) as progress:
            done = 0

            def advance() -> None:
                nonlocal done
                done += 1
                progress.update(1, done)

            return await import_dataset(
                store,
                dataset,
                Stamp(by=by, at=datetime.now(UTC)),
                dry_run=dry_run,
                allow_removals=allow_removals,
                advance=advance,
            )

    try:
        summary = run_on_database(work)
    except WriteFailed as error:
        raise click.ClickException(
            f"{file} was not imported in full: the store could not write ({error}). Each "
            "benchmark is whole or untouched; make room, then run the import again to finish."
        ) from error
    for outcome in summary.outcomes:
        if outcome.result != "unchanged":
            said = outcome.reason or outcome.changes
            line = f"{outcome.result:9} {outcome.section} {outcome.key}"
            # What the file or the store holds is shown escaped: one outcome, one line.
            click.echo(printable(line + (f": {said}" if said else "")))
    verb = "Would import (dry run, nothing written)" if dry_run else "Imported"
    click.echo(f"{verb}: {summary.describe()}.")
    if summary.rejected:
        raise SystemExit(1)


@main.command(
    "export",
    help="Write everything to FILE in the import format, as it is read: NDJSON (one item a "
    "line) if FILE ends in .ndjson, else JSON.",
)
@click.argument("file", type=click.Path(dir_okay=False, writable=True, path_type=Path))
def export_file(file: Path) -> None:
    # Written beside FILE and moved over it once whole: FILE is never left half-written.
    partial = file.with_name(f".{file.name}.part")

    async def work(store: Store) -> int:
        with partial.open("w", encoding="utf-8") as out:
            return await write_export(store, out, ndjson=file.suffix.lower() == ".ndjson")

    try:
        benchmarks = run_on_database(work)
        partial.replace(file)
    except OSError as error:
        partial.unlink(missing_ok=True)
        raise click.ClickException(f"{file} was not written: {error.strerror}") from error
    click.echo(f"Exported {counted(benchmarks, 'benchmark')} to {file}.")


@main.command(
    "backup",
    help="Copy the embedded store to FILE, consistently, while a server runs on it (SQLite's "
    "online backup). On MongoDB, use mongodump.",
)
@click.argument("file", type=click.Path(dir_okay=False, writable=True, path_type=Path))
def backup(file: Path) -> None:
    if configured().mongodb_uri:
        click.echo(
            "The almanac is on MongoDB (ALMANAC_MONGODB_URI): back it up with mongodump "
            "(docs/operations.md, Backups).",
            err=True,
        )
        raise SystemExit(1)
    # SQLite says only "unable to open database file" (and no OSError) for a missing folder.
    if not file.parent.is_dir():
        raise click.ClickException(f"{file} cannot be written: there is no folder {file.parent}")

    async def work(store: Store) -> str:
        await store.backup(file)
        return await benchmark_count(store)

    try:
        held = run_on_database(work)
    except OSError as error:
        raise click.ClickException(f"{file} cannot be written: {error.strerror}") from error
    click.echo(f"Backed up the embedded store ({held}) to {file}.")


@main.command(
    "trusted-documents",
    help=(
        "Write the manifest of the documents the site may run, for ALMANAC_TRUSTED_DOCUMENTS: "
        "DOCUMENTS are .graphql files (by default contract/*.graphql) and the manifests a "
        "client's build makes (Apollo's persisted-query manifest, Relay's "
        "persisted_queries.json), each document checked against the schema first."
    ),
)
@click.argument("documents", nargs=-1, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("trusted-documents.json"),
    show_default=True,
)
def trusted_documents(documents: tuple[Path, ...], output: Path) -> None:
    paths = list(documents) or sorted(CONTRACT_DIR.glob("*.graphql"))
    if not paths:
        click.echo(f"No documents given, and none in {CONTRACT_DIR}/.", err=True)
        raise SystemExit(1)
    manifest: dict[str, str] = {}
    for path in paths:
        for document_id, text in documents_in(path).items():
            if problems := document_problems(text):
                shown_id = printable(document_id)
                where = f"{path} ({shown_id})" if path.suffix == ".json" else str(path)
                click.echo(f"Refused: {where} does not run on this schema:", err=True)
                for problem in problems:
                    click.echo(f"  {problem}", err=True)
                raise SystemExit(1)
            if manifest.setdefault(document_id, text) != text:
                shown_id = printable(document_id)
                click.echo(f"Refused: {path} gives {shown_id} another document.", err=True)
                raise SystemExit(1)
    output.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    click.echo(f"Wrote {output}: {counted(len(manifest), 'trusted document')}.")


def documents_in(path: Path) -> dict[str, str]:
    """A .graphql file's text by its SHA-256, or a client's manifest's documents by their ids."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".json":
        return trusted_manifest([text])
    try:
        return manifest_documents(json.loads(text), str(path))
    except ValueError as error:  # JSON that does not parse, or is no manifest
        click.echo(f"Refused: {error}", err=True)
        raise SystemExit(1) from None


@main.command(
    "export-schema",
    help="Write the schema's SDL (to schema.graphql by default), refusing breaking changes.",
)
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), default=SCHEMA_FILE)
def export_schema(output: Path) -> None:
    current = published_sdl()
    if output.exists() and (breaking := breaking_changes(output.read_text("utf-8"), current)):
        click.echo(
            "Refused: these changes would break clients of the published schema. Deprecate "
            "with a reason first (`deprecation_reason=`), publish that, remove later:",
            err=True,
        )
        for change in breaking:
            click.echo(f"  {change}", err=True)
        raise SystemExit(1)
    output.write_text(current, encoding="utf-8")
    click.echo(f"Wrote {output}")
