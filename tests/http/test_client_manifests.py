"""Trusted documents from the client's build: the manifest Apollo's tooling makes
(`@apollo/generate-persisted-query-manifest`) and the one Relay's compiler makes
(`persisted_queries.json`), each the only documents a server runs, and the site's page query
through Apollo Client and through Relay against it.

The tools are installed by `./dev test` when npm is there (tests/http/client_manifests); CI
requires them (ALMANAC_REQUIRE_AUDIT=1).
"""

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import live_almanac

TOOLS = Path(__file__).parent / "client_manifests"
ROOT = Path(__file__).parents[2]
CONTRACT = ROOT / "contract" / "benchmark-page.graphql"
SLUG = "code-interpreter-benchmark-general"


@pytest.fixture(autouse=True)
def tools() -> None:
    installed = (TOOLS / "node_modules" / ".bin" / "relay-compiler").exists() and shutil.which(
        "node"
    )
    if not installed:
        if os.environ.get("ALMANAC_REQUIRE_AUDIT"):
            pytest.fail("the client tools are not installed: run `./dev test` with npm")
        pytest.skip("the client tools are not installed (needs npm)")


def run(command: list[str], folder: Path) -> str:
    done = subprocess.run(
        command, cwd=folder, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def without_typenames(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_typenames(v) for k, v in value.items() if k != "__typename"}
    if isinstance(value, list):
        return [without_typenames(item) for item in value]
    return value


def page_by_text(url: str, key: str) -> dict[str, Any]:
    """The page as the contract's own text answers it (an admin key runs any document)."""
    body = httpx.post(
        f"{url}/graphql",
        json={"query": CONTRACT.read_text(encoding="utf-8"), "variables": {"slug": SLUG}},
        headers={"Authorization": f"Bearer {key}"},
    ).json()
    data: dict[str, Any] = body["data"]
    return data


def refused(url: str, query: str) -> str:
    body = httpx.post(f"{url}/graphql", json={"query": query, "variables": {"slug": SLUG}}).json()
    code: str = body["errors"][0]["extensions"]["code"]
    return code


def test_apollo_client_runs_the_page_from_its_own_manifest(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    shutil.copy(CONTRACT, tmp_path / "src")
    config = {"documents": ["src/**/*.graphql"], "output": "persisted-query-manifest.json"}
    (tmp_path / "persisted-query-manifest.config.json").write_text(json.dumps(config))
    run([str(TOOLS / "node_modules" / ".bin" / "generate-persisted-query-manifest")], tmp_path)
    manifest = tmp_path / "persisted-query-manifest.json"
    [operation] = json.loads(manifest.read_text())["operations"]
    assert "__typename" in operation["body"]  # Apollo's printed document, not the file

    with live_almanac(trusted_documents=str(manifest)) as (url, key):
        answer = json.loads(
            run(
                [
                    "node",
                    str(TOOLS / "apollo.mjs"),
                    f"{url}/graphql",
                    str(manifest),
                    str(CONTRACT),
                    SLUG,
                ],
                tmp_path,
            )
        )
        assert without_typenames(answer["data"]) == page_by_text(url, key)
        # The file's own text is not what Apollo sends, so it is not trusted; Apollo's is.
        assert refused(url, CONTRACT.read_text(encoding="utf-8")) == "DOCUMENT_NOT_TRUSTED"
    # Apollo's cache keeps each benchmark and model once, by its id.
    cache = answer["cache"]
    page = answer["data"]["benchmark"]
    assert cache[f"Benchmark:{page['id']}"]["name"] == page["name"]
    for sibling in page["siblings"]["nodes"]:
        assert cache[f"Benchmark:{sibling['id']}"]["name"] == sibling["name"]
    assert cache[f"Model:{page['strongestModelTested']['id']}"]["name"] == "Qwen-14B"


def relay_source(contract: str) -> str:
    """The contract as a Relay app writes it: the query named after its module, the fragment
    `<module>_<name>`, spread unmasked (the page reads its rows directly)."""
    body = "\n".join(line for line in contract.splitlines() if not line.startswith("#"))
    query, _, fragment = body.partition("fragment Row on LeaderboardRow")
    query = query.replace("query BenchmarkPage(", "query BenchmarkPageQuery(")
    query = query.replace("...Row", "...BenchmarkPageQuery_row @relay(mask: false)")
    fragment = "fragment BenchmarkPageQuery_row on LeaderboardRow" + fragment
    return (
        'import { graphql } from "relay-runtime";\n\n'
        f"export const query = graphql`\n{query.strip()}\n`;\n\n"
        f"export const row = graphql`\n{fragment.strip()}\n`;\n"
    )


def test_relay_runs_the_page_from_its_compilers_persisted_queries(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    source = relay_source(CONTRACT.read_text(encoding="utf-8"))
    (tmp_path / "src" / "BenchmarkPageQuery.js").write_text(source)
    persisted = tmp_path / "persisted_queries.json"
    persisted.write_text("{}")
    config = {
        "src": "./src",
        "schema": str(ROOT / "schema.graphql"),
        "language": "javascript",
        "persistConfig": {"file": "./persisted_queries.json", "algorithm": "MD5"},
    }
    (tmp_path / "relay.config.json").write_text(json.dumps(config))
    run([str(TOOLS / "node_modules" / ".bin" / "relay-compiler")], tmp_path)
    [(document_id, _)] = json.loads(persisted.read_text()).items()
    assert len(document_id) == 32  # an MD5, as Relay's compiler made it

    artifact = tmp_path / "src" / "__generated__" / "BenchmarkPageQuery.graphql.js"
    with live_almanac(trusted_documents=str(persisted)) as (url, key):
        answer = json.loads(
            run(["node", str(TOOLS / "relay.mjs"), f"{url}/graphql", str(artifact), SLUG], tmp_path)
        )
        assert answer["data"] == page_by_text(url, key)
        assert refused(url, "{ categories { slug } }") == "DOCUMENT_NOT_TRUSTED"
