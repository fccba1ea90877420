"""`importResults` of an Inspect log on the server as it is run (`almanac serve`, uvloop's event
loop): Inspect's reader runs its own event loop, which it cannot nest in the server's."""

import json
from pathlib import Path

import httpx

from tests.conftest import live_almanac

QUERY = """
mutation($files: [Upload!]!) {
  importResults(files: $files, benchmark: "bfcl-v4", dryRun: true) { files { tool } rowCount }
}
"""


def test_an_inspect_log_sent_to_the_served_almanac_is_read(inspect_log: Path) -> None:
    operations = {"query": QUERY, "variables": {"files": [None]}}
    with live_almanac(max_body_bytes="10000000") as (url, key):
        response = httpx.post(
            f"{url}/graphql",
            data={"operations": json.dumps(operations), "map": '{"0": ["variables.files.0"]}'},
            files={"0": (inspect_log.name, inspect_log.read_bytes())},
            headers={"Authorization": f"Bearer {key}"},
            timeout=60,
        )
    answer = response.json()
    assert "errors" not in answer, answer
    assert answer["data"]["importResults"]["files"] == [{"tool": "Inspect"}]
    assert answer["data"]["importResults"]["rowCount"] == 1
