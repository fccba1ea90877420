"""A page on a local dev server (another origin) calls `./dev serve`'s API from Chromium, with
`./dev serve`'s default settings: the preflight passes and the query runs."""

import functools
import http.server
import os
import queue
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.http.protocol.test_graphiql import BROWSER, need

ROOT = Path(__file__).parents[3]
PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>A frontend on its dev server</title></head>
<body><pre id="answer">waiting</pre>
<script>
fetch("%(api)s/graphql", {
  method: "POST",
  headers: {"Content-Type": "application/json"},
  body: JSON.stringify({
    query: "query Page($slug: String!) { benchmark(slug: $slug) { name leader { modelName } } }",
    variables: {slug: "code-interpreter-benchmark-general"},
  }),
})
  .then((response) => response.json())
  .then((body) => { document.getElementById("answer").textContent = JSON.stringify(body); })
  .catch((error) => { document.getElementById("answer").textContent = "failed: " + error; });
</script></body></html>
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def dev_serve() -> Iterator[tuple[str, list[str]]]:
    """`./dev serve` on a free port and a data directory of its own: its URL and what it said
    at start."""
    port = free_port()
    environment = {k: v for k, v in os.environ.items() if not k.startswith("ALMANAC_")}
    environment["ALMANAC_DATA_DIR"] = tempfile.mkdtemp(prefix="almanac-data-")
    environment["ALMANAC_SHUTDOWN_DRAIN_SECONDS"] = "0"
    process = subprocess.Popen(
        [str(ROOT / "dev"), "serve", "--port", str(port)],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    said: list[str] = []
    started: queue.Queue[bool] = queue.Queue()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            said.append(line)
            if "Application startup complete" in line:
                started.put(True)

    threading.Thread(target=read, daemon=True).start()
    url = f"http://127.0.0.1:{port}"
    try:
        started.get(timeout=300)  # a checkout whose stamps are stale installs first
        deadline = time.monotonic() + 30
        while httpx.get(f"{url}/healthz").status_code != 200 and time.monotonic() < deadline:
            time.sleep(0.1)
        yield url, said
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture
def frontend(dev_serve: tuple[str, list[str]], tmp_path: Path) -> Iterator[str]:
    """A page served from http://localhost:<another port>: another origin than the API's."""
    (tmp_path / "index.html").write_text(PAGE % {"api": dev_serve[0]}, encoding="utf-8")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://localhost:{server.server_address[1]}/index.html"
    finally:
        server.shutdown()
        server.server_close()


def test_dev_serve_says_which_origins_may_call_it(dev_serve: tuple[str, list[str]]) -> None:
    _, said = dev_serve
    assert (
        "CORS: browsers may call this API from http://localhost:* and http://127.0.0.1:*\n" in said
    )


def test_a_page_on_another_local_origin_queries_dev_serve(frontend: str) -> None:
    need(BROWSER is not None, "no browser: install Debian's chromium to run this test")
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
            page.goto(frontend)
            answer = page.locator("#answer")
            answer.get_by_text('"data"', exact=False).or_(
                answer.get_by_text("failed", exact=False)
            ).wait_for(timeout=15_000)
            text = answer.inner_text()
            assert '"name":"Code Interpreter Benchmark General"' in text, text
            assert '"modelName":"GPT-4 (snapshot unspecified)"' in text, text
        finally:
            browser.close()
