"""Every example in docs/partners.md runs against a live server, as a partner would run it."""

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from graphql import GraphQLList, GraphQLNonNull

from request_limits.cost import default_of, list_size
from schema import schema
from schema.extensions.metering import published_types
from server.settings import Settings
from tests.conftest import live_almanac

GUIDE = Path(__file__).parents[2] / "docs" / "partners.md"
BLOCK = re.compile(r"^```(sh|python)\n(.*?)^```", re.S | re.M)
EXAMPLES = BLOCK.findall(GUIDE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def live_server() -> Iterator[dict[str, str]]:
    """`almanac serve` on the embedded store, on a free port, with the key it makes."""
    with live_almanac() as (url, key):
        yield {"ALMANAC_URL": url, "ALMANAC_KEY": key}


def test_the_guide_has_examples_of_both_kinds() -> None:
    assert {kind for kind, _ in EXAMPLES} == {"sh", "python"}


@pytest.mark.parametrize(
    ("kind", "code"), EXAMPLES, ids=[f"{i}-{kind}" for i, (kind, _) in enumerate(EXAMPLES)]
)
def test_example_runs(live_server: dict[str, str], kind: str, code: str) -> None:
    if kind == "sh" and shutil.which("curl") is None:
        pytest.skip("curl is not installed")
    command = (
        ["bash", "-euo", "pipefail", "-c", code] if kind == "sh" else [sys.executable, "-c", code]
    )
    result = subprocess.run(
        command,
        env={**os.environ, **live_server},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}"


def sized_lists() -> list[tuple[str, str, Any, dict[str, Any]]]:
    """Every list field of the published schema with its `@listSize`, connections aside."""
    types = published_types(schema)
    found = []
    for type_name, named in types.type_map.items():
        for field_name, field in getattr(named, "fields", {}).items():
            of = field.type.of_type if isinstance(field.type, GraphQLNonNull) else field.type
            sizes = list_size(types, field)
            if isinstance(of, GraphQLList) and sizes is not None:
                found.append((type_name, field_name, field, sizes))
    return found


def test_the_guide_states_the_real_limits() -> None:
    guide = GUIDE.read_text(encoding="utf-8")
    for type_name, field_name, field, sizes in sized_lists():
        if sizes.get("assumedSize") is not None:
            assert f"| `{type_name}.{field_name}` | {sizes['assumedSize']} |" in guide
            continue
        argument = sizes["slicingArguments"][0]
        default = default_of(field.args[argument])
        assert f"| `{type_name}.{field_name}` | `{argument}` | {default} |" in guide
    settings = Settings()
    for figure in (
        settings.max_query_cost,
        settings.key_bucket_capacity,
        settings.key_restore_rate,
        settings.anonymous_bucket_capacity,
        settings.anonymous_restore_rate,
        settings.max_aliases,
        settings.max_tokens,
        settings.max_body_bytes,
    ):
        assert f"{figure:,g}" in guide, figure
