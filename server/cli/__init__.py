"""The `almanac` command line: one module for each concern (serving, keys, the data, the
schema, the configuration), its commands gathered here into the one `almanac` group."""

import logging

import click

from server.cli import config, data, keys, releases, schema, serve

__all__ = ["main"]


@click.group(help="The Benchmark Almanac API. Configuration comes from ALMANAC_* variables.")
@click.version_option(package_name="benchmark-almanac-api", prog_name="almanac")
def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s:     %(name)s: %(message)s")


for command in (
    serve.serve,
    config.show_config,
    keys.key_commands,
    keys.show_admin_key,
    data.seed_database,
    data.import_file,
    data.export_file,
    data.backup,
    schema.trusted_documents,
    schema.export_schema,
    releases.release,
):
    main.add_command(command)
