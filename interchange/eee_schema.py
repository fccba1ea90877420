"""The Every Eval Ever schemas, as published, and the check of a record against the one its
`schema_version` names.

0.3.0's and 0.2.2's are copied byte for byte from the `every-eval-ever` wheels (0.3.0, and
0.2.3rc1, the only 0.2.x on PyPI; a test compares them with the wheels). Most records still
published are 0.2.0, which no wheel carries: its schema is the repository's `eval.schema.json`
as it was when they were published (evaleval/every_eval_ever at
d9be34d60cb3820833034e33a437ba4b9e4d472f, tests/interchange/fixtures/README.md).
"""

import json
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema import Draft7Validator

CURRENT = "0.3.0"
"""The version the almanac writes."""
SCHEMA_FILES = {
    "0.3.0": "eval-0.3.0.schema.json",
    "0.2.2": "eval-0.2.2.schema.json",
    "0.2.0": "eval-0.2.0.schema.json",
}
SCHEMA_PACKAGE = "interchange.schemas"


def schema_file(version: str) -> str:
    return SCHEMA_FILES[version]


@cache
def validator(version: str) -> "Draft7Validator":
    """The schema's validator, made when a record is first checked (jsonschema is imported then:
    every `almanac` command would otherwise pay for it at start)."""
    from jsonschema import Draft7Validator

    text = resources.files(SCHEMA_PACKAGE).joinpath(SCHEMA_FILES[version]).read_text("utf-8")
    return Draft7Validator(json.loads(text))


def schema_for(record: Any) -> str | None:
    """The schema a record is checked against: its own version's, 0.2.2 for 0.2.1 (the last
    0.2.x schema published); None for a version the almanac does not know."""
    version = record.get("schema_version") if isinstance(record, dict) else None
    if version in SCHEMA_FILES:
        return str(version)
    return "0.2.2" if version == "0.2.1" else None


def record_problem(record: Any) -> tuple[str, str] | None:
    """The first way `record` breaks its schema, as (JSON path, message); None if it is valid."""
    version = schema_for(record)
    if version is None:
        found = record.get("schema_version") if isinstance(record, dict) else None
        known = ", ".join(sorted(SCHEMA_FILES))
        return (
            "$.schema_version",
            f"schema version {found!r} is not one the almanac reads ({known}, 0.2.1)",
        )
    errors = sorted(validator(version).iter_errors(record), key=lambda e: e.json_path)
    if not errors:
        return None
    error = errors[0]
    where = "$" + "".join(
        f"[{part}]" if isinstance(part, int) else f".{part}" for part in error.absolute_path
    )
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return where, f"not valid Every Eval Ever {version}: {_short(error.message)}{more}"


def _short(message: str, limit: int = 160) -> str:
    return message if len(message) <= limit else message[: limit - 1] + "…"
