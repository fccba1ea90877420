"""`almanac import` of the field's own formats (Every Eval Ever records, lm-eval results files,
Inspect logs), and `almanac export --format eee`: what the command says and prints; the reading,
matching and writing are interchange's."""

import os
from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import click

from editing import Stamp, counted
from interchange import (
    ALMANAC_FORMATS,
    INSPECT_INSTALL,
    TOOL_FORMATS,
    FileRefused,
    ImportOptions,
    ImportRefused,
    ImportReport,
    detect,
    import_tool_files,
    inspect_available,
    read_files,
    write_eee,
)
from server.cli.store_access import run_on_database
from server.observability import printable
from store import SourceKind, Store, WriteFailed

FORMATS = (*ALMANAC_FORMATS, *TOOL_FORMATS)
EEE_FILE = "almanac.eee.jsonl"
EXPORT_FORMATS = (
    f"eee: Every Eval Ever records, written into FILE (a folder) as {EEE_FILE}. Without it, "
    "the import format."
)


def tool_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The options of an import of a tool's files."""
    options = [
        click.option(
            "--format",
            "kind",
            type=click.Choice(FORMATS),
            help="The files' format; told from their content when not given.",
        ),
        click.option("--benchmark", help="The benchmark every score of the files is for (slug)."),
        click.option(
            "--map",
            "map_file",
            type=click.Path(exists=True, dir_okay=False, path_type=Path),
            help="A two-column CSV: a task or evaluation name in the files, a benchmark slug "
            "(empty or - leaves the name out).",
        ),
        click.option(
            "--read-on",
            type=click.DateTime(["%Y-%m-%d"]),
            help="The day the results were read (the read's date; today when not given).",
        ),
        click.option(
            "--reported-by",
            type=click.Choice([kind.name for kind in SourceKind]),
            help="Who reported the scores, in place of what the files say.",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def is_tool_import(paths: Sequence[Path], kind: str | None) -> bool:
    """Whether the files are a tool's (a folder's are taken as such), not the almanac's own."""
    if kind is not None:
        return kind in TOOL_FORMATS
    return any(path.is_dir() or _tool_file(path) for path in paths)


def _tool_file(path: Path) -> bool:
    """Whether the file's content says a tool wrote it; a file whose format cannot be told is
    left to the almanac's own reader, which says what is wrong with it."""
    try:
        return detect(path) in TOOL_FORMATS
    except FileRefused:
        return False


def almanac_file(paths: Sequence[Path]) -> Sequence[Path]:
    """The one file of the almanac's own formats an import takes."""
    if len(paths) != 1 or paths[0].is_dir():
        raise click.UsageError(
            "the almanac's own formats (json, ndjson, csv) are imported one file at a time"
        )
    return paths


def import_tool_results(
    paths: Sequence[Path],
    *,
    kind: str | None,
    benchmark: str | None,
    map_file: Path | None,
    read_on: datetime | None,
    reported_by: str | None,
    dry_run: bool,
    by: str,
) -> None:
    """Read, check and import the files whole, or refuse them in one line (exit code 1)."""
    if kind == "inspect" and not inspect_available():
        raise click.ClickException(INSPECT_INSTALL)
    try:
        files = read_files(paths, kind)
    except (FileRefused, ImportRefused) as refused:
        raise click.ClickException(printable(str(refused))) from refused
    day: date | None = read_on.date() if read_on is not None else None
    options = ImportOptions(kind, benchmark, map_file, day, reported_by)

    async def work(store: Store) -> ImportReport:
        stamp = Stamp(by=by, at=datetime.now(UTC))
        return await import_tool_files(store, files, options, stamp, dry_run=dry_run)

    try:
        report = run_on_database(work)
    except (FileRefused, ImportRefused) as refused:
        raise click.ClickException(printable(str(refused))) from refused
    except WriteFailed as error:
        raise click.ClickException(
            f"the import was not written in full: the store could not write ({error}). Each "
            "benchmark is whole or untouched; make room, then run the import again."
        ) from error
    for file in report.files:
        scores = counted(len(file.results), "score")
        click.echo(printable(f"read     {file.provenance()}: {scores}"))
    for change in report.rows:
        click.echo(printable(change.describe()))
    for outcome in report.summary.outcomes:
        if outcome.changes:
            click.echo(printable(f"leaders  {outcome.key}: {outcome.changes}"))
    verb = "Would import (dry run, nothing written)" if dry_run else "Imported"
    click.echo(f"{verb}: {report.summary.describe()}.")


def export_eee(folder: Path) -> None:
    """`almanac.eee.jsonl` written into `folder`, beside it first and moved over once whole."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise click.ClickException(f"{folder} cannot be made: {error.strerror}") from error
    target = folder / EEE_FILE
    partial = folder / f".{EEE_FILE}.part"

    async def work(store: Store) -> int:
        with partial.open("w", encoding="utf-8") as out:
            return await write_eee(store, out)

    try:
        count = run_on_database(work)
        os.replace(partial, target)
    except OSError as error:
        partial.unlink(missing_ok=True)
        raise click.ClickException(f"{target} was not written: {error.strerror}") from error
    click.echo(f"Exported {count} Every Eval Ever records to {target}.")
