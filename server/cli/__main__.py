"""`python -m server.cli`: the `almanac` command."""

from server.cli import main

main()
