"""The `almanac` command: serve the API, seed a MongoDB, export the schema."""

import asyncio
import logging
from pathlib import Path

import click
import uvicorn

from schema import schema
from server.settings import Settings
from store.client import connect
from store.indexes import ensure_indexes
from store.seed import load_bundled_dataset, seed

SCHEMA_FILE = Path("schema.graphql")


@click.group(help="The Benchmark Almanac API. Configuration comes from ALMANAC_* variables.")
def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s:     %(name)s: %(message)s")


@main.command(help="Serve the GraphQL API (GraphiQL at /graphql in a browser).")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535))
@click.option("--workers", default=1, show_default=True, type=click.IntRange(min=1))
def serve(host: str, port: int, workers: int) -> None:
    settings = Settings()
    if workers > 1 and not settings.mongodb_uri:
        raise click.UsageError(
            "Several workers need a shared database: the embedded store lives inside one "
            "process, so each worker would hold its own copy. Set ALMANAC_MONGODB_URI, or "
            "serve with --workers 1."
        )
    click.echo(f"GraphiQL: http://{host}:{port}/graphql  (POST GraphQL requests to the same URL)")
    uvicorn.run(
        "server.app:app_from_environment",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level=settings.log_level,
        proxy_headers=True,
    )


@main.command("seed", help="Load the bundled dataset into the configured MongoDB (idempotent).")
def seed_database() -> None:
    settings = Settings()
    if not settings.mongodb_uri:
        raise click.UsageError(
            "Set ALMANAC_MONGODB_URI to the MongoDB to seed. (Without it the API serves an "
            "embedded store that it seeds by itself at start-up.)"
        )

    async def run() -> None:
        store = connect(settings.mongodb_uri, settings.mongodb_database)
        await ensure_indexes(store.db)
        summary = await seed(store, load_bundled_dataset())
        click.echo(
            f"Seeded '{settings.mongodb_database}': {summary.created} created, "
            f"{summary.updated} updated, {summary.unchanged} unchanged."
        )

    asyncio.run(run())


@main.command("export-schema", help="Write the schema's SDL (to schema.graphql by default).")
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), default=SCHEMA_FILE)
def export_schema(output: Path) -> None:
    output.write_text(schema_sdl(), encoding="utf-8")
    click.echo(f"Wrote {output}")


def schema_sdl() -> str:
    return schema.as_str() + "\n"


if __name__ == "__main__":
    main()
