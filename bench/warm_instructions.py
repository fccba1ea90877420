"""Instructions per warm request (a kept answer), counted by callgrind: repeatable whatever
else the machine is doing, so two commits can be compared on a shared machine.

One process sends the contract request (contract/benchmark-page.graphql) N times through the
whole app (httpx's ASGITransport: no sockets, the app's middleware, view and kept answers),
after one request that computes the answer. Run under callgrind with two counts, the
difference divided by the difference of counts is what one warm request costs:

    valgrind --tool=callgrind --callgrind-out-file=/dev/null .venv/bin/python \\
        bench/warm_instructions.py --requests 1100 --method POST 2>&1 | grep 'refs'
    (the same with --requests 100; (refs(1100) - refs(100)) / 1000)

    .venv/bin/python bench/warm_instructions.py --compare   # both counts, both methods

`--compare` runs the four valgrind runs itself (valgrind from Debian's package) and prints
instructions per warm request for POST and for GET (the contract query as a GET request).
"""

import argparse
import asyncio
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx

from bench.run import CONTRACT, SLUG
from server.app import create_app
from server.settings import Settings


async def send(requests: int, method: str) -> None:
    with tempfile.TemporaryDirectory() as data_dir:
        settings = Settings(
            data_dir=Path(data_dir),
            anonymous_bucket_capacity=1_000_000_000,
            anonymous_restore_rate=1_000_000_000,
            log_level="warning",
            metrics=False,
        )
        app = create_app(settings)
        query = CONTRACT.read_text(encoding="utf-8")
        variables = {"slug": SLUG}
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 50000))
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(transport=transport, base_url="http://almanac.test") as http,
        ):
            for _ in range(requests + 1):  # the first computes the answer; the rest reuse it
                if method == "GET":
                    params = {"query": query, "variables": json.dumps(variables)}
                    response = await http.get("/graphql", params=params)
                else:
                    body = {"query": query, "variables": variables}
                    response = await http.post("/graphql", json=body)
                if response.status_code != 200 or "errors" in response.json():
                    sys.exit(f"unexpected answer: {response.status_code} {response.text[:200]}")


def instructions(requests: int, method: str) -> int:
    """The instructions callgrind counts for one process sending `requests` warm requests."""
    run = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            sys.executable,
            __file__,
            "--requests",
            str(requests),
            "--method",
            method,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    found = re.search(r"refs:\s+([\d,]+)", run.stderr)
    if found is None:
        sys.exit(f"callgrind printed no count:\n{run.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--method", choices=("POST", "GET"), default="POST")
    parser.add_argument("--compare", action="store_true", help="run callgrind and print")
    args = parser.parse_args()
    if not args.compare:
        asyncio.run(send(args.requests, args.method))
        return
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is needed: apt-get install valgrind")
    for method in ("POST", "GET"):
        few, many = instructions(100, method), instructions(1100, method)
        print(f"{method}: {(many - few) / 1000:,.0f} instructions per warm request")


if __name__ == "__main__":
    main()
