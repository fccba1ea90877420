"""`importResults`: a tool's result files (Every Eval Ever records, lm-eval results, Inspect logs)
sent by the GraphQL multipart request spec, imported as `almanac import` imports them: whole, or
refused whole with one message naming the file and where in it."""

import asyncio
import re
import tempfile
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Annotated

import strawberry

from api_errors import ApiError
from editing import Stamp
from interchange import (
    TOOL_FORMATS,
    FileRefused,
    ImportOptions,
    ImportRefused,
    ImportReport,
    import_tool_files,
    read_files,
)
from schema.caller import admin_of
from schema.context import Context
from schema.vocabulary import WRITE, SourceKind, Upload, UploadedFile, at_most
from store import Date

MAX_FILES = 100
"""The files one request may send (each is a part of a body the request limit bounds)."""
MAX_SHOWN = 1000
"""The rows and leader changes an answer lists (the count says how many there are)."""


@strawberry.type(description="A file read by an import: what made it, its name and its hash.")
class ImportedFile:
    name: str = strawberry.field(description="The file's name as sent.")
    sha256: str = strawberry.field(description="The SHA-256 of its bytes, in hex.")
    tool: str = strawberry.field(description="The tool or format that wrote it.")
    version: str = strawberry.field(description="The tool's or format's version.")
    score_count: int = strawberry.field(description="How many scores the file holds.")


@strawberry.type(description="A leaderboard row an import adds or changes.")
class ImportedRow:
    benchmark: str = strawberry.field(description="The benchmark's slug.")
    change: str = strawberry.field(description="`added` or `changed`.")
    model_name: str = strawberry.field(description="The model, as the file names it.")
    setting: str | None = strawberry.field(description="The row's setting, if any.")
    before: float | None = strawberry.field(description="The score before (changed rows).")
    after: float | None = strawberry.field(description="The score, in the benchmark's unit.")


@strawberry.type(description="What an import of a tool's files did (with `dryRun`: would do).")
class ResultsImport:
    written: bool = strawberry.field(description="False for a dry run: nothing was written.")
    files: list[ImportedFile] = strawberry.field(
        description="Each file read.", directives=[at_most(MAX_FILES)]
    )
    row_count: int = strawberry.field(description="How many rows it adds or changes.")
    rows: list[ImportedRow] = strawberry.field(
        description=f"The rows added or changed (the first {MAX_SHOWN}).",
        directives=[at_most(MAX_SHOWN)],
    )
    leader_changes: list[str] = strawberry.field(
        description="Each benchmark's rows and leaders before and after, in words (the first "
        f"{MAX_SHOWN} benchmarks).",
        directives=[at_most(MAX_SHOWN)],
    )


Format = Annotated[
    str | None,
    strawberry.argument(
        description=f"The files' format ({', '.join(TOOL_FORMATS)}); told from their content "
        "when not given."
    ),
]


@strawberry.type
class ImportMutations:
    @strawberry.mutation(
        directives=[WRITE],
        description="Import a tool's result files (Every Eval Ever, lm-eval, Inspect), sent by "
        "the GraphQL multipart request spec, as `almanac import` does: each score matched to a "
        "benchmark, put in its unit, with its standard error, sample size, who reported it and "
        "the file's provenance; written whole, or refused whole (BAD_USER_INPUT, naming the "
        "file and where in it). Files are limited by the request body limit.",
    )
    async def import_results(
        self,
        info: strawberry.Info[Context],
        files: Annotated[
            list[Upload],
            strawberry.argument(description="The files, each a part of the multipart request."),
        ],
        format: Format = None,
        benchmark: Annotated[
            str | None, strawberry.argument(description="The benchmark of every score (slug).")
        ] = None,
        map: Annotated[
            Upload | None,
            strawberry.argument(
                description="A two-column CSV: a name in the files, a benchmark slug (empty "
                "or - leaves the name out)."
            ),
        ] = None,
        read_on: Annotated[
            Date | None, strawberry.argument(description="The read's date (today if not given).")
        ] = None,
        reported_by: Annotated[
            SourceKind | None,
            strawberry.argument(description="Who reported the scores, over what the files say."),
        ] = None,
        dry_run: Annotated[
            bool, strawberry.argument(description="Check and say what would change; write nothing.")
        ] = False,
    ) -> ResultsImport:
        by = admin_of(info.context.identity).name
        if len(files) > MAX_FILES:
            raise ApiError(f"files: at most {MAX_FILES} files a request, not {len(files)}.")
        if format is not None and format not in TOOL_FORMATS:
            raise ApiError(f"format: expected one of {', '.join(TOOL_FORMATS)}, not {format!r}.")
        with tempfile.TemporaryDirectory(prefix="almanac-import-") as folder:
            paths = [_saved(Path(folder) / str(n), upload) for n, upload in enumerate(files)]
            mapping = _saved(Path(folder) / "map", map) if map is not None else None
            kind = reported_by.name if reported_by is not None else None
            day = date.fromisoformat(read_on) if read_on is not None else None
            options = ImportOptions(format, benchmark, mapping, day, kind)
            try:
                # In a thread: Inspect's reader runs an event loop of its own (it cannot nest in
                # the server's uvloop), and a big file's parsing must not stall the server.
                read = await asyncio.to_thread(read_files, paths, format)
                stamp, receipt = Stamp(by, datetime.now(UTC)), info.context.changes
                report = await import_tool_files(
                    info.context.store, read, options, stamp, dry_run=dry_run, receipt=receipt
                )
            except (FileRefused, ImportRefused) as refused:
                raise ApiError(str(refused).replace(f"{folder}/", "")) from refused
        return results_import(report)


def results_import(report: ImportReport) -> ResultsImport:
    """What an import did (or would do), as `importResults` answers it: at most `MAX_SHOWN`
    rows and leader changes."""
    return ResultsImport(
        written=report.written,
        files=[
            ImportedFile(
                name=file.path.name,
                sha256=file.sha256,
                tool=file.tool,
                version=file.version,
                score_count=len(file.results),
            )
            for file in report.files
        ],
        row_count=len(report.rows),
        rows=[
            ImportedRow(
                benchmark=row.benchmark,
                change=row.change,
                model_name=row.model_name,
                setting=row.setting,
                before=row.before,
                after=row.after,
            )
            for row in report.rows[:MAX_SHOWN]
        ],
        leader_changes=[
            f"{outcome.key}: {outcome.changes}"
            for outcome in report.summary.outcomes
            if outcome.changes
        ][:MAX_SHOWN],
    )


def _saved(folder: Path, upload: object) -> Path:
    """The upload written under its own name (its last part, without path), in a folder of its
    own: the name the file's provenance gives."""
    if not isinstance(upload, UploadedFile):  # a string sent where a file goes
        raise ApiError("Send each file by the GraphQL multipart request spec.")
    name = re.sub(r"[^\w.+-]", "_", Path(upload.filename or "upload").name)
    folder.mkdir()
    path = folder / (name.lstrip(".") or "upload")
    path.write_bytes(upload.content)
    return path
