"""Instructions per warm request (a kept answer), counted by callgrind: repeatable whatever
else the machine is doing, so two commits can be compared on a shared machine.

One process sends the contract request (contract/benchmark-page.graphql) N times straight
through the app's ASGI interface (no sockets, no client library: the app's middleware, view
and kept answers), after one request that computes the answer. Run under callgrind with two
counts, the difference divided by the difference of counts is what one warm request costs:

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
from urllib.parse import urlencode

from starlette.types import ASGIApp, Message

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
            # Under callgrind the first (computing) request runs some 50 times slower.
            request_timeout_seconds=3600,
        )
        app = create_app(settings)
        query = CONTRACT.read_text(encoding="utf-8")
        variables = {"slug": SLUG}
        if method == "GET":
            target = "/graphql?" + urlencode({"query": query, "variables": json.dumps(variables)})
            body = b""
        else:
            target = "/graphql"
            body = json.dumps({"query": query, "variables": variables}).encode()
        async with app.router.lifespan_context(app):
            for _ in range(requests + 1):  # the first computes the answer; the rest reuse it
                status, answer = await asgi_request(app, method, target, body)
                if status != 200 or not answer.startswith(b'{"data"'):
                    sys.exit(f"unexpected answer: {status} {answer[:200]!r}")


async def asgi_request(app: ASGIApp, method: str, target: str, body: bytes) -> tuple[int, bytes]:
    """One request straight through the ASGI app (no client library: only the server's work
    is counted), its status and body."""
    path, _, query_string = target.partition("?")
    headers = [(b"host", b"almanac.test"), (b"accept", b"application/json")]
    if body:
        headers += [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query_string.encode(),
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("almanac.test", 80),
        "state": {},
    }
    sent = False
    status, chunks = 0, []

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: Message) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    await app(scope, receive, send)
    return status, b"".join(chunks)


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
