"""`almanac config`: the effective configuration, checked, secrets masked."""

import json

import click

from server.cli.store_access import configured
from server.configuration import effective_configuration


@click.command("config", help="Print the effective configuration (secrets masked), checked.")
@click.option("--json", "as_json", is_flag=True, help="As one JSON object of variable to value.")
def show_config(as_json: bool) -> None:
    rows = effective_configuration(configured())
    if as_json:
        click.echo(json.dumps({name: value for name, value, _ in rows}, indent=1))
        return
    width = max(len(name) for name, _, _ in rows)
    for name, value, source in rows:
        click.echo(f"{name:<{width}}  {value}{'' if source == 'default' else '  (set)'}")
