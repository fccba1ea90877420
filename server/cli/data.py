"""The almanac's data: `almanac seed`, `import`, `export` and `backup`."""

import getpass
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from editing import (
    ImportSummary,
    InvalidInput,
    Stamp,
    control_character,
    counted,
    import_dataset,
    item_count,
    read_dataset,
    seed,
    write_export,
)
from server.cli.interchange import (
    EXPORT_FORMATS,
    almanac_file,
    export_eee,
    import_tool_results,
    is_tool_import,
    tool_options,
)
from server.cli.store_access import configured, run_on_database
from server.lifespan import benchmark_count
from server.observability import printable
from store import Store, WriteFailed


@click.command("seed", help="Load the bundled dataset into the configured store (idempotent).")
def seed_database() -> None:
    summary = run_on_database(seed, seeding=False)
    click.echo(f"Seeded: {summary.describe()}.")


@click.command(
    "import",
    help="Import a JSON (everything), NDJSON or CSV (leaderboard rows) file; or a tool's results, "
    "files or folders of them: Every Eval Ever records, lm-eval results files, Inspect logs.",
)
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
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
@tool_options
def import_file(
    files: tuple[Path, ...], dry_run: bool, allow_removals: bool, by: str, **tool: Any
) -> None:
    if (problem := control_character(by)) is not None:
        raise click.BadParameter(problem, param_hint="--by")
    if is_tool_import(files, tool["kind"]):  # a tool's results: interchange's import
        import_tool_results(files, dry_run=dry_run, by=by, **tool)
        return
    [file] = almanac_file(files)
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


@click.command(
    "export",
    help="Write everything to FILE in the import format, as it is read: NDJSON (one item a "
    "line) if FILE ends in .ndjson, else JSON.",
)
@click.argument("file", type=click.Path(writable=True, path_type=Path))
@click.option("--format", "kind", type=click.Choice(["eee"]), help=EXPORT_FORMATS)
def export_file(file: Path, kind: str | None) -> None:
    if kind == "eee":  # Every Eval Ever records: FILE is the folder to write them in
        export_eee(file)
        return
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


@click.command(
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
