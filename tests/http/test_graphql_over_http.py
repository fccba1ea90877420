"""The GraphQL-over-HTTP spec's own server audit (graphql-http), against `almanac serve`.

graphql-http's audit is installed by `./dev test` when npm is there (tests/http/graphql_http_audit);
CI requires it (ALMANAC_REQUIRE_AUDIT=1).
"""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import live_almanac

AUDIT = Path(__file__).parent / "graphql_http_audit"


def test_every_check_of_the_audit_passes() -> None:
    installed = (AUDIT / "node_modules" / "graphql-http").is_dir() and shutil.which("node")
    if not installed:
        if os.environ.get("ALMANAC_REQUIRE_AUDIT"):
            pytest.fail("graphql-http's audit is not installed: run `./dev test` with npm")
        pytest.skip("graphql-http's audit is not installed (needs npm)")
    with live_almanac() as (url, _):
        run = subprocess.run(
            ["node", str(AUDIT / "audit.mjs"), f"{url}/graphql"],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
    results = [json.loads(line) for line in run.stdout.splitlines()]
    failed = [result for result in results if result["status"] != "ok"]
    assert failed == []
    assert len(results) == 61
