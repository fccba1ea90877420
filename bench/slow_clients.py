"""Latency of a normal client while slow and idle ones hold connections, against an idle server.

`almanac serve` (one worker, default settings, a budget that refuses nothing) is measured by
wrk (4 connections, the contract request) alone, then while 1,000 idle sockets and 300 clients
trickling a request head at a byte a second are held open by another process (each reopened
as soon as the server lets it go), alternately, twice each. The clients run on one core, the
server on the other(s), and the hostile clients at the lowest priority, so that wrk's own
timing is not theirs: as if they ran on other machines.
Bar: p99 under attack within 2x of p99 alone.

    apt-get install wrk && .venv/bin/python bench/slow_clients.py [--seconds 10]
"""

import argparse
import asyncio
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.run import CONTRACT, SLUG, UNREFUSING_BUDGET, latency, lua_string
from tests.conftest import live_almanac

IDLE = 1_000
TRICKLING = 300
HEAD = b"POST /graphql HTTP/1.1\r\nHost: almanac\r\nContent-Type: application/json\r\n"


async def hold(host: str, port: int, trickle: bool) -> None:
    """One hostile client: connect, send nothing or a byte a second, reconnect when let go."""
    while True:
        try:
            reader, writer = await asyncio.open_connection(host, port)
        except OSError:
            await asyncio.sleep(0.1)
            continue
        try:
            for byte in HEAD if trickle else b"":
                writer.write(bytes([byte]))
                with contextlib.suppress(TimeoutError):
                    if not await asyncio.wait_for(reader.read(65536), 1.0):
                        break
            while await reader.read(65536):  # until the server lets go
                pass
        except OSError:
            pass
        writer.close()


async def attack(host: str, port: int) -> None:
    clients = [hold(host, port, False) for _ in range(IDLE)]
    clients += [hold(host, port, True) for _ in range(TRICKLING)]
    await asyncio.gather(*clients)


def measure(url: str, script: Path, seconds: int) -> float:
    command = ["wrk", "-t1", "-c4", f"-d{seconds}s", "-s", str(script), "--latency", url]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return latency(output, "99%")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--attack", nargs=2, metavar=("HOST", "PORT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.attack:
        asyncio.run(attack(args.attack[0], int(args.attack[1])))
        return
    body = json.dumps({"query": CONTRACT.read_text(), "variables": {"slug": SLUG}})
    budget = {name.removeprefix("ALMANAC_").lower(): v for name, v in UNREFUSING_BUDGET.items()}
    with tempfile.TemporaryDirectory() as scratch, live_almanac(**budget) as (url, _):
        script = Path(scratch) / "post.lua"
        script.write_text(
            'wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n'
            f"wrk.body = {lua_string(body)}\n"
        )
        host, port = url.removeprefix("http://").split(":")
        # The clients (wrk, and the hostile ones) share the last core, the server the others,
        # as they would on separate machines; the same for every run.
        os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})
        measure(f"{url}/graphql", script, 2)  # warm-up
        rows = []
        for _ in range(args.runs):
            alone = measure(f"{url}/graphql", script, args.seconds)
            hostile = [sys.executable, "-m", "bench.slow_clients", "--attack", host, port]
            attacker = subprocess.Popen(["nice", "-n", "19", *hostile])
            time.sleep(3)  # every hostile client connected
            held = open_connections(int(port))
            under_attack = measure(f"{url}/graphql", script, args.seconds)
            attacker.terminate()
            attacker.wait()
            rows.append((alone, under_attack, held))
    print(f"{'run':>4}{'p99 alone ms':>15}{'p99 attacked ms':>18}{'ratio':>8}{'held':>7}")
    for i, (alone, attacked, held) in enumerate(rows, start=1):
        print(f"{i:>4}{alone:>15.2f}{attacked:>18.2f}{attacked / alone:>8.2f}{held:>7}")
    print("\nBar: p99 under attack within 2x of p99 alone (ratio <= 2).")


def open_connections(port: int) -> int:
    """Established connections to the server's port, as the kernel counts them."""
    output = subprocess.run(
        ["ss", "-Htn", "state", "established", f"( sport = :{port} )"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    return len(output.splitlines())


if __name__ == "__main__":
    main()
