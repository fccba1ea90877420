"""Memory under hostile traffic: the server's RSS while clients send what would grow it.

One Uvicorn worker with the default settings (and a budget that refuses nothing, so every
request reaches the caches) is sent, over 16 keep-alive connections from loopback:
- 200,000 distinct small queries (each a new document, cost and answer to cache);
- 200,000 repeats of a refused document carrying a 95 KB unused variable;
- 10,000 distinct documents of some 90 KB (a unique comment, then `{ __typename }`).
The server's RSS is printed at each tenth of each phase. Bar: it levels off under the cache
budgets plus a fixed base (below 400 MB with the defaults), and repeated refusals add nothing.

    .venv/bin/python bench/soak.py [--scale 0.1]
"""

import argparse
import asyncio
import json
import re
from pathlib import Path

from bench.run import UNREFUSING_BUDGET, serve

PHASES = (
    ("distinct small queries", 200_000),
    ("refused, 95 KB variable", 200_000),
    ("90 KB documents", 10_000),
)
CONNECTIONS = 16


def body(kind: str, number: int) -> bytes:
    if kind == "distinct":
        query = f"query Distinct{number} {{ modelCardCoverage {{ labsRead }} }}"
        return json.dumps({"query": query}).encode()
    if kind == "refused":
        return json.dumps(
            {"query": "{ nosuchfield }", "variables": {"unused": "x" * 95_000}}
        ).encode()
    return json.dumps({"query": f"#{number} {'c' * 90_000}\n{{ __typename }}"}).encode()


async def send(host: str, port: int, kind: str, numbers: range) -> None:
    """POST one request per number over CONNECTIONS keep-alive connections."""

    async def connection(mine: range) -> None:
        reader, writer = await asyncio.open_connection(host, port)
        for number in mine:
            content = body(kind, number)
            writer.write(
                b"POST /graphql HTTP/1.1\r\nHost: almanac\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\n\r\n%s" % (len(content), content)
            )
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(re.search(rb"content-length: (\d+)", head, re.I)[1])  # type: ignore[index]
            await reader.readexactly(length)
        writer.close()

    await asyncio.gather(*(connection(numbers[i::CONNECTIONS]) for i in range(CONNECTIONS)))


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of each phase to send")
    args = parser.parse_args()
    server = serve("server.app:app_from_environment", UNREFUSING_BUDGET)
    with server as url:
        host, port = url.removeprefix("http://").split(":")
        pid = server.process.pid
        print(f"{'phase':28}{'sent':>9}{'RSS MB':>9}")
        print(f"{'(idle, after start)':28}{0:>9}{rss_mb(pid):>9.0f}")
        offset = 0
        for (name, total), kind in zip(PHASES, ("distinct", "refused", "large"), strict=True):
            step = max(1, int(total * args.scale) // 10)
            for tenth in range(1, 11):
                asyncio.run(send(host, int(port), kind, range(offset, offset + step)))
                offset += step
                print(f"{name:28}{step * tenth:>9}{rss_mb(pid):>9.0f}", flush=True)


if __name__ == "__main__":
    main()
