"""What a refused request costs the server: its CPU time per request of each kind of refusal,
side by side with a `{ __typename }` request, on a SYNTHETIC almanac (bench/synthetic.py).

The almanac (1,000 benchmarks) is imported with `almanac import` into a new data directory and
served by `almanac serve` (default settings, answer reuse on) on a free loopback port, pinned to
core 0; this client runs on core 1. Every request is anonymous, told apart by X-Forwarded-For
(believed from 127.0.0.1 by default), so that each refusal is the one meant, and only it:
- the baseline, the over-cost, malformed and two-operation requests come, batch by batch, from a
  new address, whose full bucket takes the whole batch (each refusal costs 1 point);
- the over-budget ones (a big query, a CSV download, the export) from one address whose bucket
  was emptied first and refills at 1e-9 points a second: each is 429 `THROTTLED`.
Refusals over the streaming transports, each from a new address per batch too: over SSE (a POST
asking for text/event-stream: a query, which SSE does not carry, and a syntax error), and over
graphql-transport-ws (a query, a syntax error, and a subscription over the maximum cost), each
`subscribe` on a few WebSockets opened (and `connection_init`-ed) before the batch's CPU is
read, answered by an `error` message with its code.
For reference (no bar), `{ __typename }` is also sent with an API key (`almanac keys create`,
a budget that refuses nothing): what the key's lookup adds. Every answer's status and
`extensions.code` are checked; an unexpected answer fails its kind.

The server's CPU (utime + stime from /proc/<pid>/stat) is read before and after each batch of
requests of one kind over a few keep-alive connections; rounds of every kind in turn, repeated,
so that the machine's drift falls on all kinds alike. Reported: the median CPU per request of
each kind, and its ratio to `{ __typename }`. Bar (issues 17, 27): each refusal at most 2x.

Then bench/export_flood.py's measure_export_flood (RSS during 30 concurrent anonymous exports,
bar: at most 50 MB over idle) runs, in the same run (`--no-flood` leaves it out).

    .venv/bin/python bench/pay_before_work.py [--benchmarks 1000] [--rounds 5] [--quick]
        [--root CHECKOUT]    # serve another checkout's code (e.g. /work/main), before/after
"""

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path
from typing import Any

import httpx
import websockets
from websockets import Subprotocol

from bench.export_flood import measure_export_flood
from bench.observability import cpu_seconds
from bench.refusals import (
    BASELINE,
    BIG,
    EMPTIED,
    EMPTY_RESTORE_RATE,
    KINDS,
    MAX_QUERY_COST,
    TINY,
    WEBSOCKET,
    Kind,
    Sender,
    graphql,
)
from bench.run import HOST, ROOT, free_port, wait_until_up
from bench.synthetic import synthetic_almanac

BAR = 2.0
FLOOD_BAR_MB = 50.0
FLOOD_CLIENTS = 30


@dataclass
class Measured:
    """A kind's batches: CPU per request of each, requests sent, and mismatched answers."""

    cpu_us: list[float] = field(default_factory=list)
    requests: int = 0
    mismatches: int = 0
    example: str | None = None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--benchmarks", type=int, help="the almanac's size (default 1000; 300 with --quick)"
    )
    parser.add_argument(
        "--rounds", type=int, help="rounds of every kind (default 5; 3 with --quick)"
    )
    parser.add_argument(
        "--requests", type=int, help="most requests a batch (default 2000; 300 with --quick)"
    )
    parser.add_argument(
        "--batch-seconds",
        type=float,
        help="a batch stops after this long (default 10; 3 with --quick)",
    )
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--quick", action="store_true", help="a short run, for a look")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose code serves")
    parser.add_argument("--no-flood", action="store_true", help="skip the export flood's RSS")
    args = parser.parse_args()
    quick = args.quick
    benchmarks = args.benchmarks or (300 if quick else 1000)
    rounds = args.rounds or (3 if quick else 5)
    requests = args.requests or (300 if quick else 2000)
    seconds = args.batch_seconds or (3.0 if quick else 10.0)
    root = args.root.resolve()

    pinned = shutil.which("taskset") is not None and len(os.sched_getaffinity(0)) >= 2
    if pinned:
        os.sched_setaffinity(0, {1})
    with tempfile.TemporaryDirectory(prefix="almanac-pay-before-work-") as scratch:
        data_dir = Path(scratch) / "data"
        environment = server_environment(data_dir)
        file = Path(scratch) / "synthetic.json"
        file.write_text(json.dumps(synthetic_almanac(benchmarks)))
        began = time.monotonic()
        almanac(root, environment, "import", str(file), "--by", "bench")
        file.unlink()
        print(f"imported {benchmarks} SYNTHETIC benchmarks in {time.monotonic() - began:.1f} s")
        key = almanac(
            root,
            environment,
            *("keys", "create", "--name", "bench", "--scope", "read"),
            *("--capacity", "1000000000", "--restore-rate", "1000000000"),
        ).splitlines()[0]
        port = free_port()
        pin = ["taskset", "-c", "0"] if pinned else []
        server = subprocess.Popen(
            [
                *pin,
                sys.executable,
                "-m",
                "server.cli",
                "serve",
                "--host",
                HOST,
                "--port",
                str(port),
            ],
            cwd=root,
            env=environment,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            url = f"http://{HOST}:{port}"
            wait_until_up(url)
            results = asyncio.run(
                measure(url, key, server.pid, rounds, requests, seconds, args.connections)
            )
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(
        f"\nServer CPU per request, {benchmarks} SYNTHETIC benchmarks, median of {rounds} "
        f"interleaved rounds ({'server on core 0, client on core 1' if pinned else 'not pinned'}; "
        f"code: {root}):\n"
    )
    print(table(results))
    for kind, measured in results.items():
        if measured.example is not None:
            print(
                f"\n{kind.name}: {measured.mismatches} unexpected answers, e.g. {measured.example}"
            )

    # RSS during the export flood (issue 17's second bar), in the same run.
    if not args.no_flood:
        figures = measure_export_flood(benchmarks=benchmarks, clients=FLOOD_CLIENTS, root=root)
        print(flood_table(figures))


def server_environment(data_dir: Path) -> dict[str, str]:
    kept = {k: v for k, v in os.environ.items() if not k.startswith("ALMANAC_")}
    return {
        **kept,
        "ALMANAC_DATA_DIR": str(data_dir),
        "ALMANAC_MAX_QUERY_COST": str(MAX_QUERY_COST),
        "ALMANAC_ANONYMOUS_BUCKET_CAPACITY": str(MAX_QUERY_COST),
        "ALMANAC_ANONYMOUS_RESTORE_RATE": EMPTY_RESTORE_RATE,
        "ALMANAC_SHUTDOWN_DRAIN_SECONDS": "0",
    }


def almanac(root: Path, environment: dict[str, str], *arguments: str) -> str:
    """Runs the `almanac` CLI of `root`'s code; its standard output."""
    done = subprocess.run(
        [sys.executable, "-m", "server.cli", *arguments],
        cwd=root,
        env=environment,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"almanac {' '.join(arguments[:2])} failed:\n{done.stderr}")
    return done.stdout


async def measure(
    url: str, key: str, pid: int, rounds: int, requests: int, seconds: float, connections: int
) -> dict[Kind, Measured]:
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    results = {kind: Measured() for kind in KINDS}
    addresses = (f"10.{n // 65536 % 256}.{n // 256 % 256}.{n % 256}" for n in count(1))

    def sender(kind: Kind) -> dict[str, str]:
        if kind.sender is Sender.KEY:
            return {"Authorization": f"Bearer {key}"}
        if kind.sender is Sender.EMPTIED:
            return {"X-Forwarded-For": EMPTIED}
        return {"X-Forwarded-For": next(addresses)}

    def senders(kind: Kind, connections: int) -> list[dict[str, str]]:
        """The batch's sender; a WebSocket's batch, one for each of its connections (an
        address holds at most 2 subscriptions: each refusal is the one meant, not the bound)."""
        return [sender(kind) for _ in range(connections if kind.method == WEBSOCKET else 1)]

    async with httpx.AsyncClient(base_url=url, timeout=600, limits=limits) as client:
        await check_setup(client, requests, sender(BASELINE))
        await empty_budget(client, sender(KINDS[2]))
        # A round unmeasured first: what is loaded or compiled once is not counted.
        for kind in KINDS:
            await batch(client, kind, senders(kind, 1), pid, 3, 0, 1, Measured())
        for number in range(rounds):
            for kind in KINDS:
                cpu_us = await batch(
                    client,
                    *(kind, senders(kind, connections), pid, requests, seconds, connections),
                    results[kind],
                )
                print(f"round {number + 1} {kind.name:40} {cpu_us:>9.0f} µs", flush=True)
    return results


GRAPHQL_HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/graphql-response+json",  # a request error is then a 400
}


async def check_setup(client: httpx.AsyncClient, requests: int, fresh: dict[str, str]) -> None:
    """The big query would run and is within the maximum: over budget is its only fault. A
    fresh address's bucket takes a whole batch of the cheapest request (each refusal costs 1)."""
    headers = {**GRAPHQL_HEADERS, **fresh}
    answer = (await client.post("/graphql", content=graphql(BIG), headers=headers)).json()
    if "errors" in answer:
        raise RuntimeError(f"the big query does not run: {answer['errors']}")
    big = answer["extensions"]["cost"]["requestedQueryCost"]
    answer = (await client.post("/graphql", content=graphql(TINY), headers=headers)).json()
    tiny = answer["extensions"]["cost"]["requestedQueryCost"]
    print(f"the big query costs {big} points, `{TINY}` {tiny} (maximum {MAX_QUERY_COST})")
    if requests * tiny > MAX_QUERY_COST:
        raise SystemExit(f"--requests: at most {MAX_QUERY_COST // tiny}, one address's budget")


async def empty_budget(client: httpx.AsyncClient, emptied: dict[str, str]) -> None:
    """Spends the address's bucket to 0 (it refills at 1e-9 points a second)."""
    remaining, headers = MAX_QUERY_COST, {**GRAPHQL_HEADERS, **emptied}
    for _ in range(10_000):
        spend = min(remaining, 101)  # a query of cost 1 + n (n <= 100), or one of cost 1
        query = (
            f"{{ benchmarks(first: {spend - 1}) {{ nodes {{ slug }} }} }}" if spend > 1 else TINY
        )
        response = await client.post("/graphql", content=graphql(query), headers=headers)
        remaining = int(response.headers["ratelimit-remaining"])
        if remaining == 0:
            return
    raise RuntimeError(f"the budget of {emptied} did not empty: {remaining} points left")


async def batch(
    client: httpx.AsyncClient,
    kind: Kind,
    senders: list[dict[str, str]],
    pid: int,
    requests: int,
    seconds: float,
    connections: int,
    measured: Measured,
) -> float:
    """Up to `requests` of one kind (at least 3, for at most about `seconds`), checked; the
    server's CPU per request, in µs, also kept in `measured`."""
    if kind.method == WEBSOCKET:
        return await websocket_batch(
            str(client.base_url), kind, senders, pid, requests, seconds, measured
        )
    headers = {**senders[0]}
    if kind.body is not None:
        headers |= {**GRAPHQL_HEADERS, "Accept": kind.accept}
    sent = 0
    deadline = time.monotonic() + seconds

    async def connection() -> None:
        nonlocal sent
        while sent < requests and (sent < 3 or time.monotonic() < deadline):
            sent += 1
            response = await client.request(
                kind.method, kind.path, content=kind.body, headers=headers
            )
            wrong = kind.mismatch(response)
            if wrong is not None:
                measured.mismatches += 1
                measured.example = measured.example or wrong

    before = cpu_seconds(pid)
    await asyncio.gather(*(connection() for _ in range(connections)))
    cpu_us = (cpu_seconds(pid) - before) / sent * 1e6
    if seconds:  # the unmeasured round passes 0
        measured.cpu_us.append(cpu_us)
        measured.requests += sent
    return cpu_us


async def websocket_batch(
    url: str,
    kind: Kind,
    senders: list[dict[str, str]],
    pid: int,
    requests: int,
    seconds: float,
    measured: Measured,
) -> float:
    """`batch` over graphql-transport-ws: up to `requests` `subscribe` messages of the kind's
    query over a WebSocket for each sender, opened (and acknowledged) beforehand, each
    answered before the next is sent; the server's CPU per message, in µs."""
    address = url.replace("http://", "ws://").rstrip("/") + "/graphql"
    assert kind.body is not None
    query = kind.body.decode()
    opened = [
        await websockets.connect(
            address, subprotocols=[Subprotocol("graphql-transport-ws")], additional_headers=sender
        )
        for sender in senders
    ]
    for connection in opened:
        await connection.send(json.dumps({"type": "connection_init", "payload": {}}))
        await connection.recv()  # connection_ack
    sent = 0
    deadline = time.monotonic() + seconds

    async def subscribing(connection: websockets.ClientConnection) -> None:
        nonlocal sent
        while sent < requests and (sent < 3 or time.monotonic() < deadline):
            sent += 1
            id = str(sent)
            message = {"type": "subscribe", "id": id, "payload": {"query": query}}
            await connection.send(json.dumps(message))
            while (answer := json.loads(await connection.recv())).get("id") != id:
                pass  # a ping
            wrong = kind.refused_over_websocket(answer)
            if wrong is not None:
                measured.mismatches += 1
                measured.example = measured.example or wrong

    try:
        before = cpu_seconds(pid)
        await asyncio.gather(*(subscribing(connection) for connection in opened))
        cpu_us = (cpu_seconds(pid) - before) / sent * 1e6
    finally:
        for connection in opened:
            await connection.close()
    if seconds:  # the unmeasured round passes 0
        measured.cpu_us.append(cpu_us)
        measured.requests += sent
    return cpu_us


def table(results: dict[Kind, Measured]) -> str:
    baseline = statistics.median(results[BASELINE].cpu_us)
    lines = [
        "| Request | CPU µs/request (median) | vs `{ __typename }` | Bar | Result "
        "| Requests (unexpected answers) |",
        "|---|---:|---:|---|---|---:|",
    ]
    for kind, measured in results.items():
        cpu = statistics.median(measured.cpu_us)
        ratio = cpu / baseline
        checked = f"{measured.requests} ({measured.mismatches})"
        if kind is BASELINE or kind.sender is Sender.KEY:
            verdict = "baseline" if kind is BASELINE else "for reference"
            verdict = "**fail**: unexpected answers" if measured.mismatches else verdict
            lines.append(f"| {kind.name} | {cpu:,.0f} | {ratio:,.2f}x | | {verdict} | {checked} |")
            continue
        passed = ratio <= BAR and measured.mismatches == 0
        verdict = "pass" if passed else "**fail**"
        if measured.mismatches:
            verdict += ": unexpected answers"
        lines.append(
            f"| {kind.name} | {cpu:,.0f} | {ratio:,.2f}x | ≤ {BAR:g}x | {verdict} | {checked} |"
        )
    return "\n".join(lines)


def flood_table(figures: dict[str, Any]) -> str:
    verdict = "pass" if figures["within_bar"] else "**fail**"
    return "\n".join(
        [
            f"\nRSS during {figures['clients']} concurrent anonymous exports "
            f"({figures['benchmarks']} SYNTHETIC benchmarks; statuses {figures['statuses']}):\n",
            "| Idle RSS MB | Peak RSS MB | Growth MB | Bar | Result |",
            "|---:|---:|---:|---|---|",
            f"| {figures['idle_rss_mb']} | {figures['peak_rss_mb']} | {figures['growth_mb']} "
            f"| ≤ {FLOOD_BAR_MB:g} MB | {verdict} |",
        ]
    )


if __name__ == "__main__":
    main()
