"""The schema's commands: `almanac export-schema` and `almanac trusted-documents`."""

import json
from pathlib import Path

import click

from editing import counted
from schema import breaking_changes, document_problems, published_sdl
from server.manifests import manifest_documents, trusted_manifest
from server.observability import printable

SCHEMA_FILE = Path("schema.graphql")
CONTRACT_DIR = Path("contract")


@click.command(
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


@click.command(
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
