"""What every command shares: the settings, checked (or refused in one line per problem), and
the configured store, opened, prepared and seeded for the command's work."""

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import NoReturn, TypeVar

import click

from editing import ensure_seeded
from server.configuration import ConfigurationError, load_settings, unknown_variables, variable
from server.graphql import load_trusted_documents
from server.manifests import read_manifest
from server.services import open_configured
from server.settings import Settings
from store import Store, StoreUnavailable, prepare

T = TypeVar("T")


def configured() -> Settings:
    """The settings, every one checked; or each bad one named, and exit code 2."""
    problems = []
    try:
        settings = load_settings()
    except ConfigurationError as error:
        problems = error.problems
    if (problem := untrusted_document()) is not None:
        problems.append(problem)
    if problems:
        refuse_configuration(problems)
    for name in unknown_variables():
        logging.getLogger("almanac").warning("%s is no setting: ignored (misspelt?)", name)
    return settings


def untrusted_document() -> str | None:
    """A trusted document that would not run on the schema, named with its manifest. (The
    settings check the manifest's form, and name a manifest that has none: they build no
    schema.)"""
    name = variable("trusted_documents")
    if not (given := os.environ.get(name)):
        return None
    try:
        read_manifest(Path(given))
    except (OSError, ValueError):
        return None  # named by the settings' own check
    try:
        load_trusted_documents(Path(given))
    except ValueError as error:
        return f"{name}: {error} (given {given!r})"
    return None


def refuse_configuration(problems: list[str]) -> NoReturn:
    click.echo("Configuration refused; nothing was started:", err=True)
    for problem in problems:
        click.echo(f"  {problem}", err=True)
    raise SystemExit(2)


def run_on_database(work: Callable[[Store], Awaitable[T]], *, seeding: bool = True) -> T:
    """`work` on the configured store, opened and prepared, and seeded first if it is a new
    data directory (or a seed was cut short); a store that cannot be opened is one line on
    stderr and exit code 2."""

    async def run() -> T:
        store = open_configured(configured())
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
