"""Every example in docs/partners.md runs against a live server, as a partner would run it."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from graphql import GraphQLList, GraphQLNonNull

from request_limits.cost import default_of, list_size
from schema import schema
from schema.extensions.metering import published_types
from server.configuration import PREFIX
from server.settings import Settings
from store import Store
from tests.conftest import skip_unless_required
from tests.docs.guides import ROOT, SHELL, Block, blocks
from tests.http.reads.test_contract import GENERAL

GUIDE = ROOT / "docs" / "partners.md"
EXAMPLES = [
    block for block in blocks(GUIDE) if block.not_run is None and block.info in {*SHELL, "python"}
]
PAGE = ROOT / "contract" / "benchmark-page.graphql"


def test_the_guide_has_examples_of_both_kinds() -> None:
    assert {"python", "sh"} <= {block.info for block in EXAMPLES}


def test_the_variables_the_examples_read_are_no_settings(live_server: dict[str, str]) -> None:
    """A partner exports them where the `almanac` command may run: an ALMANAC_* name would be
    read as a setting, or warned of as a misspelt one (ALMANAC_URL and ALMANAC_KEY were)."""
    code = "\n".join(block.code for block in EXAMPLES)
    read = set(re.findall(r"\$\{?([A-Z][A-Z0-9_]*)", code))
    read |= set(re.findall(r"os\.environ\[[\"']([A-Z][A-Z0-9_]*)", code))
    assert set(live_server) <= read
    every_block = "\n".join(block.code for block in blocks(GUIDE))  # the JavaScript ones too
    read |= set(re.findall(r"process\.env\.([A-Z][A-Z0-9_]*)", every_block))
    read |= set(re.findall(r"os\.environ(?:\.get\(|\[)[\"']([A-Z][A-Z0-9_]*)", every_block))
    assert [name for name in read if name.startswith(PREFIX)] == []


@pytest.mark.parametrize("block", EXAMPLES, ids=[block.name for block in EXAMPLES])
def test_example_runs(live_server: dict[str, str], block: Block, tmp_path: Path) -> None:
    if block.info in SHELL and shutil.which("curl") is None:
        skip_unless_required("ALMANAC_REQUIRE_CURL", "curl is not installed")
    command = (
        ["bash", "-euo", "pipefail", "-c", block.code]
        if block.info in SHELL
        else [sys.executable, "-c", block.code]
    )
    result = subprocess.run(
        command,
        env={**os.environ, **live_server},
        cwd=tmp_path,  # what an example writes goes to a folder of its own
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}"


def test_the_guide_states_what_the_page_costs(live_server: dict[str, str]) -> None:
    """The cost the guide quotes is what the live server charges the site's page."""
    answer = httpx.post(
        live_server["BENCHMARK_ALMANAC_URL"] + "/graphql",
        json={
            "query": PAGE.read_text(encoding="utf-8"),
            "variables": {"slug": "code-interpreter-benchmark-general"},
        },
    ).json()
    cost = answer["extensions"]["cost"]["requestedQueryCost"]
    assert f"The site's own benchmark page costs {cost}." in GUIDE.read_text(encoding="utf-8")


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


def test_the_guide_states_the_real_limits(live_server: dict[str, str]) -> None:
    guide = GUIDE.read_text(encoding="utf-8")
    for type_name, field_name, field, sizes in sized_lists():
        if sizes.get("assumedSize") is not None:
            assert f"| `{type_name}.{field_name}` | {sizes['assumedSize']} |" in guide
            continue
        argument = sizes["slicingArguments"][0]
        default = default_of(field.args[argument])
        assert f"| `{type_name}.{field_name}` | `{argument}` | {default} |" in guide
    # What the live server reports of its budgets and maximum, with a key and without.
    url = live_server["BENCHMARK_ALMANAC_URL"] + "/graphql"
    query = {"query": "{ categories { slug } }"}
    keyed = httpx.post(
        url, json=query, headers={"Authorization": f"Bearer {live_server['BENCHMARK_ALMANAC_KEY']}"}
    ).json()["extensions"]["cost"]
    anonymous = httpx.post(url, json=query).json()["extensions"]["cost"]
    reported = [
        keyed["maximumQueryCost"],
        keyed["throttleStatus"]["maximumAvailable"],
        keyed["throttleStatus"]["restoreRate"],
        anonymous["throttleStatus"]["maximumAvailable"],
        anonymous["throttleStatus"]["restoreRate"],
    ]
    settings = Settings()
    for figure in (
        *reported,
        settings.max_aliases,
        settings.max_tokens,
        settings.max_body_bytes,
        settings.max_depth,
        settings.max_batch,
    ):
        assert f"{figure:,g}" in guide, figure
    assert f"| an API key | {reported[1]:,g} points | {reported[2]:,g} points a second |" in guide
    assert (
        f"| anonymous, per IP address | {reported[3]:,g} points | {reported[4]:,g} points" in guide
    )


async def test_the_cost_table_says_what_each_kind_of_request_costs(
    client: httpx.AsyncClient, store: Store
) -> None:
    guide = GUIDE.read_text(encoding="utf-8")

    def row(request: str, cost: str) -> None:
        assert f"| {request} | {cost} |" in guide, request

    async def charged(response: httpx.Response) -> int:
        if "almanac-cost" in response.headers:
            return int(response.headers["almanac-cost"])
        return int(response.json()["extensions"]["cost"]["requestedQueryCost"])

    catalog = "{ benchmarks(first: 10) { nodes { slug } } }"
    row("a query or a mutation", "its cost, as above, computed before it runs")
    first = await client.get("/graphql", params={"query": catalog})
    assert await charged(first) == 1 + 10
    row(
        "a query asked again on unchanged data (answered from the answer kept for it)",
        "its cost, as if it ran",
    )
    assert await charged(await client.get("/graphql", params={"query": catalog})) == 11
    row("a `GET` whose `If-None-Match` names the answer's ETag (304)", "1")
    held = await client.get(
        "/graphql", params={"query": catalog}, headers={"If-None-Match": first.headers["etag"]}
    )
    assert (held.status_code, await charged(held)) == (304, 1)
    row("a batch", "its operations' costs together, paid once before any of them runs")
    batch = await client.post("/graphql", json=[{"query": catalog}, {"query": "{ __typename }"}])
    assert [part["extensions"]["cost"]["requestedQueryCost"] for part in batch.json()] == [11, 1]

    row(
        "a refused request: malformed, invalid, over a limit, several operations and no "
        "`operationName`, a bad key, a change without an admin key",
        "1",
    )
    for refused in (
        await client.post(
            "/graphql", content=b"{oops", headers={"content-type": "application/json"}
        ),
        await client.post("/graphql", json={"query": "{ nope }"}),
        await client.post(
            "/graphql", json={"query": "{ benchmarks(first: 100000) { totalCount } }"}
        ),
        await client.post(
            "/graphql", json={"query": "query A { __typename } query B { __typename }"}
        ),
        await client.post(
            "/graphql", json={"query": catalog}, headers={"Authorization": "Bearer nope"}
        ),
        await client.post(
            "/graphql",
            json={"query": 'mutation { createLab(input: {slug: "x", name: "X"}) { slug } }'},
        ),
    ):
        assert "errors" in refused.json()
        assert await charged(refused) == 1

    row(
        "`/benchmarks/{slug}.csv` or `.json`",
        "2, plus 3 for each model its leaderboard lists (its row, interval and rank range)",
    )
    leaderboard = await client.get(f"/benchmarks/{GENERAL}.json")
    listed = {entry["listedAs"] for entry in leaderboard.json()["leaderboard"]}
    assert await charged(leaderboard) == 2 + 3 * len(listed)
    row("a download's or the export's 304", "1")
    held = await client.get(
        f"/benchmarks/{GENERAL}.csv",
        headers={"If-None-Match": (await client.get(f"/benchmarks/{GENERAL}.csv")).headers["etag"]},
    )
    assert (held.status_code, await charged(held)) == (304, 1)

    row(
        "`/models/{slug}.csv`",
        "what `model(slug:) { standings }` costs for its results, 100 a page",
    )
    standings = await client.post(
        "/graphql",
        json={"query": '{ model(slug: "qwen-14b") { standings(first: 100) { totalCount } } }'},
    )
    results = standings.json()["data"]["model"]["standings"]["totalCount"]
    assert 0 < results <= 100
    as_queried = await client.post("/graphql", json={"query": STANDINGS_PAGE % results})
    assert "errors" not in as_queried.json()
    assert await charged(await client.get("/models/qwen-14b.csv")) == await charged(as_queried)

    row("`/export.ndjson`", "1, plus 1 for each lab, category, model and benchmark")
    export = await client.get("/export.ndjson")
    assert await charged(export) == 1 + len(export.text.splitlines()) - 1


# What /models/{slug}.csv asks for each page of its results (server.resources.downloads.STANDINGS).
STANDINGS_PAGE = """{ model(slug: "qwen-14b") { slug name standings(first: %d) {
  nodes { rank score setting leads leadsTrackedModels benchmark { slug name scoresRefreshedOn }
    couldLead couldLeadTrackedModels
    row { interval { low high level computed } standardError sampleSize
      rankRange { best worst } reportedBy selfReported releasedAfterTestSet } }
  pageInfo { hasNextPage endCursor } } } }"""
