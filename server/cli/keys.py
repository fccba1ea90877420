"""`almanac keys ...` (create, list, budget, revoke) and `almanac admin-key`."""

from collections.abc import Callable

import click

from request_limits import BucketPolicy
from server.api_keys import ADMIN_KEY_FILE, SCOPES, create_key, in_force, revoke_key, set_budget
from server.cli.store_access import configured, run_on_database
from server.observability import printable


@click.group("keys", help="Create, list and revoke API keys (`Authorization: Bearer <key>`).")
def key_commands() -> None:
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


@key_commands.command(
    "create", help="Create a key and print it: its secret is shown only this once."
)
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


@key_commands.command(
    "list", help="List keys: name, scope, budget, created, revoked (never secrets)."
)
def list_api_keys() -> None:
    for doc in run_on_database(lambda store: store.api_keys()):
        budget = BucketPolicy(**doc["budget"]) if "budget" in doc else None
        revoked = f"revoked {doc['revoked_at']}" if doc["revoked_at"] else "in force"
        click.echo(  # a name stored before names were checked is shown escaped
            f"{printable(doc['name'])}\t{doc['scope']}\t{describe_budget(budget)}\t"
            f"created {doc['created_at']}\t{revoked}"
        )


@key_commands.command(
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


@key_commands.command("revoke", help="Revoke a key by name: it stops working on the next request.")
@click.argument("name")
def revoke_api_key(name: str) -> None:
    if not run_on_database(lambda store: revoke_key(store, name)):
        raise click.ClickException(f"No key named {name!r} is in force.")
    click.echo(f"Key {name!r} revoked.")


@click.command(
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
