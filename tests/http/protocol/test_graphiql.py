"""GraphiQL: served with its own files, it opens in a real browser and runs a query."""

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from server.app import create_app
from server.graphql.graphiql import ASSETS
from server.settings import GRAPHIQL_PACKAGES, Settings
from store import Store
from tests.conftest import http_client

ASSETS_INSTALLED = all((GRAPHIQL_PACKAGES / path).is_file() for path in ASSETS.values())
BROWSER = shutil.which("chromium")
REQUIRED = os.environ.get("ALMANAC_REQUIRE_BROWSER") == "1"  # CI sets it: never skip there.
ROOT = Path(__file__).parents[3]


def need(condition: bool, reason: str) -> None:
    if not condition:
        if REQUIRED:
            pytest.fail(reason)
        pytest.skip(reason)


async def test_browser_gets_graphiql(client: httpx.AsyncClient) -> None:
    need(ASSETS_INSTALLED, "GraphiQL's files are not installed: npm ci --prefix server/graphiql")
    page = await client.get("/graphql", headers={"accept": "text/html"})
    assert page.status_code == 200
    assert "/graphiql/graphiql.js" in page.text
    for name in ASSETS:
        asset = await client.get(f"/graphiql/{name}")
        assert asset.status_code == 200, name
        assert len(asset.content) > 1000
    missing = await client.get("/graphiql/package.json")
    assert missing.status_code == 404
    assert missing.json()["errors"][0]["extensions"]["code"] == "NOT_FOUND"


async def test_missing_graphiql_files_never_show_where_the_server_looked(
    store: Store, tmp_path: Path
) -> None:
    folder = tmp_path / "secret-server-folder"
    async with http_client(create_app(Settings(graphiql_packages=folder), store)) as http:
        page = await http.get("/graphql", headers={"accept": "text/html"})
        asset = await http.get("/graphiql/graphiql.js")
    assert "npm ci --prefix server/graphiql" in page.text
    assert "secret-server-folder" not in page.text
    assert str(tmp_path) not in page.text
    assert asset.status_code == 404
    assert asset.json()["errors"][0]["extensions"]["code"] == "NOT_FOUND"


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [
        *(sys.executable, "-m", "uvicorn", "server.app:app_from_environment", "--factory"),
        *("--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"),
    ]
    data = tempfile.mkdtemp(prefix="almanac-data-")
    process = subprocess.Popen(command, cwd=ROOT, env={**os.environ, "ALMANAC_DATA_DIR": data})
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{url}/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_graphiql_runs_a_query_in_chromium(server_url: str) -> None:
    need(BROWSER is not None, "no browser: install Debian's chromium to run this test")
    need(ASSETS_INSTALLED, "GraphiQL's files are not installed: npm ci --prefix server/graphiql")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=BROWSER,
            args=[
                *("--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"),
                *("--disable-background-networking", "--disable-component-update"),
                "--disable-sync",
            ],
        )
        try:
            page = browser.new_page()
            failed: list[str] = []
            page.on("requestfailed", lambda request: failed.append(request.url))
            page.goto(f"{server_url}/graphql")
            page.locator(".graphiql-execute-button").click()
            # The example query's answer: the page's name, leader and tracked leader.
            result = page.locator(".graphiql-response")
            result.get_by_text("Code Interpreter Benchmark General").wait_for(timeout=15_000)
            text = result.inner_text()
            assert "GPT-4 (snapshot unspecified)" in text
            assert '"modelName": "Qwen-14B"' in text
            assert failed == []  # Every file came from this server, none from the internet.
        finally:
            browser.close()
