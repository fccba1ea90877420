"""The configuration as the process starts: every ALMANAC_* setting checked (by `Settings`)
before anything opens, one message a bad setting so an operator fixes them all at once; and the
effective configuration, its secrets masked (`almanac config`)."""

import os
from urllib.parse import urlsplit, urlunsplit

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from server.settings import Settings

PREFIX = "ALMANAC_"
# Read by the test suite, not by the server.
TEST_SUITE_PREFIXES = ("ALMANAC_TEST_", "ALMANAC_REQUIRE_")
MASK = "****"


class ConfigurationError(Exception):
    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


def variable(field: str) -> str:
    return PREFIX + field.upper()


def load_settings() -> Settings:
    """The settings from the environment, or ConfigurationError listing every bad one."""
    try:
        return Settings()
    except ValidationError as error:
        raise ConfigurationError([problem(item) for item in error.errors()]) from None


def problem(item: ErrorDetails) -> str:
    message = item["msg"].removeprefix("Value error, ")
    if not item["loc"]:  # a rule between settings, not one setting's value
        return message
    name = variable(str(item["loc"][0]))
    given = os.environ.get(name)
    shown = f" (given {given!r})" if given is not None and not is_secret(name) else ""
    return f"{name}: {message}{shown}"


def unknown_variables() -> list[str]:
    """ALMANAC_* variables that are no setting: most often a misspelt one, silently unused."""
    known = {variable(field) for field in Settings.model_fields}
    return sorted(
        name
        for name in os.environ
        if name.startswith(PREFIX)
        and name not in known
        and not name.startswith(TEST_SUITE_PREFIXES)
    )


def is_secret(name: str) -> bool:
    return name in (variable("mongodb_uri"), variable("redis_url"))


def masked(url: str) -> str:
    """A connection URL with its password replaced by ****."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    userinfo = f"{parts.username}:{MASK}" if parts.username else f":{MASK}"
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{userinfo}@{host}"))


def effective_configuration(settings: Settings) -> list[tuple[str, str, str]]:
    """(variable, value, where it came from) for every setting, secrets masked."""
    rows = []
    for field in Settings.model_fields:
        name = variable(field)
        value = getattr(settings, field)
        if isinstance(value, list):
            text = ",".join(str(item) for item in value)
        elif value is None:
            text = ""
        else:
            text = str(value).lower() if isinstance(value, bool) else str(value)
        if is_secret(name) and text:
            text = masked(text)
        rows.append((name, text, "environment" if name in os.environ else "default"))
    return rows
