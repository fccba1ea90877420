"""The `almanac` command line."""

from server.cli.commands import main

__all__ = ["main"]
