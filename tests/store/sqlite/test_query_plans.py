"""Every query of a page, the catalog and a model page uses an index on the embedded store:
`EXPLAIN QUERY PLAN` of each statement the real requests run shows no full scan."""

import re

import httpx
import pytest

from store import Store
from store.sqlite import SqliteStore
from tests.http.reads.test_contract import CONTRACT, GENERAL

REQUESTS = {
    "page": {"query": CONTRACT.read_text(encoding="utf-8"), "variables": {"slug": GENERAL}},
    "siblings further on": {
        "query": f'{{ benchmark(slug: "{GENERAL}") {{ siblings(first: 2, after: "b2Zmc2V0OjQ=") {{ nodes {{ slug }} }} }} }}'
    },
    "catalog": {
        "query": "{ benchmarks(first: 5) { totalCount nodes { slug trackedLeader { modelName } category { benchmarkCount } } } }"
    },
    "catalog by name, in a category": {
        "query": '{ benchmarks(first: 5, orderBy: NAME, filter: {category: "tool-use"}) { nodes { slug } } }'
    },
    "catalog by release, by lab": {
        "query": '{ benchmarks(first: 5, orderBy: NEWEST_RELEASE, filter: {lab: "qwen"}) { nodes { slug } } }'
    },
    "model": {
        "query": '{ model(slug: "qwen-14b") { results(first: 3) { rank benchmark { name } } } }'
    },
}
# A full scan: SQLite reads every row of a table, not through an index. Counting the whole
# catalog reads every entry of its smallest index (a covering scan, some 20 bytes a benchmark):
# that one is allowed.
FULL_SCAN = re.compile(r"^SCAN \w+$")


@pytest.mark.parametrize("name", REQUESTS)
async def test_no_request_scans_a_whole_table(
    store: Store, client: httpx.AsyncClient, name: str
) -> None:
    if not isinstance(store, SqliteStore):
        pytest.skip("MongoDB's plans are its own (store/indexes.py); this checks SQLite's")
    statements: list[str] = []
    await store.watch_statements(statements.append)
    body = (await client.post("/graphql", json=REQUESTS[name])).json()
    await store.watch_statements(None)
    assert "errors" not in body, body
    reads = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
    assert reads, "the request read nothing"
    for statement in reads:
        plan = await store.query_plan(statement)
        scans = [step for step in plan if FULL_SCAN.match(step)]
        if not statement.startswith("SELECT count(*) FROM benchmarks"):
            scans += [step for step in plan if step.startswith("SCAN") and "COVERING" in step]
        assert not scans, f"{statement}\n{plan}"
