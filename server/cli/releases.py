"""`almanac release`: make, list and delete releases (the CLI opens the store itself: it is an
administrator's tool, as `almanac import` is)."""

import getpass
from datetime import UTC, datetime

import click

from releases import ReleaseRefused, StoredRelease, delete_release, stored_releases
from schema import create_release
from server.cli.store_access import run_on_database
from server.observability import printable
from store import Store


@click.group(
    "release",
    help="Releases people can cite: the almanac frozen into files that never change, served at "
    "/releases/<id>/<file>.",
)
def release() -> None:
    pass


@release.command(
    "create",
    help="Freeze the almanac as it is now into a release (the NDJSON export, one CSV a "
    "leaderboard, a manifest) and print its id: the same data always gets the same id.",
)
@click.option("--title", required=True, help="What the release is called where it is cited.")
def create(title: str) -> None:
    async def work(store: Store) -> tuple[StoredRelease, bool]:
        return await create_release(store, title)

    try:
        stored, made = run_on_database(work)
    except ReleaseRefused as refusal:
        raise click.ClickException(str(refusal)) from None
    release, counts = stored.release, stored.release.counts
    click.echo(release.id)
    said = (
        "Released" if made else f"This data was released already, as {printable(release.title)!r}"
    )
    click.echo(
        f"{said}: {counts.benchmarks} benchmarks, {counts.models} models, {counts.results} "
        f"leaderboard rows in {len(release.files) + 1} files; "
        f"/releases/{release.id}/manifest.json lists them.",
        err=True,
    )


@release.command("list", help="List releases, newest first: id, made, title, and deletions.")
def list_releases() -> None:
    for stored in run_on_database(stored_releases):
        release, deleted = stored.release, stored.deleted
        gone = "" if deleted is None else f"\tdeleted {deleted.at.isoformat()}: {deleted.why}"
        click.echo(
            f"{release.id}\t{release.created_at.isoformat()}\t{printable(release.title)}{gone}"
        )


@release.command(
    "delete",
    help="Delete a release's files; its id then answers 410 Gone, with when and why.",
)
@click.argument("release_id", metavar="ID")
@click.option("--why", required=True, help="Why it is deleted: shown with its tombstone.")
@click.option(
    "--by",
    default=lambda: f"cli:{getpass.getuser()}",
    show_default="cli:<user>",
    help="Who deleted it.",
)
def delete(release_id: str, why: str, by: str) -> None:
    async def work(store: Store) -> StoredRelease:
        return await delete_release(store, release_id, why, by, now=datetime.now(UTC))

    try:
        run_on_database(work)
    except ReleaseRefused as refusal:
        raise click.ClickException(str(refusal)) from None
    click.echo(f"Deleted release {release_id}: it answers 410 Gone from now on.")
