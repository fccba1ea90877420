"""Latency of a normal client while slow and idle ones hold connections, against an idle server.

`almanac serve` (one worker, default settings, a budget that refuses nothing) is measured by
wrk (4 connections, the contract request) alone, then while 1,000 idle sockets and 300 clients
trickling a request head at a byte a second are held open (each reopened as soon as the
server lets it go), alternately, twice each. Bar: p99 under attack within 2x of p99 alone.

    apt-get install wrk && .venv/bin/python bench/slow_clients.py [--seconds 10]
"""

import argparse
import asyncio
import json
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.run import CONTRACT, SLUG, UNREFUSING_BUDGET, latency, lua_string
from tests.conftest import live_almanac

IDLE = 1_000
TRICKLING = 300
HEAD = b"POST /graphql HTTP/1.1\r\nHost: almanac\r\nContent-Type: application/json\r\n"


async def hold(host: str, port: int, trickle: bool, stop: asyncio.Event) -> None:
    """One hostile client: connect, send nothing or a byte a second, reconnect when let go."""
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection(host, port)
        except OSError:
            await asyncio.sleep(0.1)
            continue
        sent = 0
        while not stop.is_set():
            if trickle and sent < len(HEAD):
                writer.write(HEAD[sent : sent + 1])
                sent += 1
            try:
                if not await asyncio.wait_for(reader.read(65536), 1.0):
                    break  # Let go by the server: come back.
            except TimeoutError:
                continue
            except OSError:
                break
        writer.close()


def attack(host: str, port: int) -> tuple[threading.Thread, Callable[[], None]]:
    """The hostile clients, in a thread of their own; and how to stop them."""
    ready = threading.Event()
    handles: dict[str, Any] = {}

    def run() -> None:
        async def clients() -> None:
            handles["stop"], handles["loop"] = asyncio.Event(), asyncio.get_running_loop()
            held = [hold(host, port, False, handles["stop"]) for _ in range(IDLE)]
            held += [hold(host, port, True, handles["stop"]) for _ in range(TRICKLING)]
            ready.set()
            await asyncio.gather(*held)

        asyncio.run(clients())

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    ready.wait()
    return thread, lambda: handles["loop"].call_soon_threadsafe(handles["stop"].set)


def measure(url: str, script: Path, seconds: int) -> float:
    command = ["wrk", "-t1", "-c4", f"-d{seconds}s", "-s", str(script), "--latency", url]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return latency(output, "99%")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=10)
    args = parser.parse_args()
    body = json.dumps({"query": CONTRACT.read_text(), "variables": {"slug": SLUG}})
    budget = {name.removeprefix("ALMANAC_").lower(): v for name, v in UNREFUSING_BUDGET.items()}
    with tempfile.TemporaryDirectory() as scratch, live_almanac(**budget) as (url, _):
        script = Path(scratch) / "post.lua"
        script.write_text(
            'wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n'
            f"wrk.body = {lua_string(body)}\n"
        )
        host, port = url.removeprefix("http://").split(":")
        measure(f"{url}/graphql", script, 2)  # warm-up
        rows = []
        for _ in range(2):
            alone = measure(f"{url}/graphql", script, args.seconds)
            thread, stop = attack(host, int(port))
            time.sleep(3)  # every hostile client connected
            held = open_connections(int(port))
            under_attack = measure(f"{url}/graphql", script, args.seconds)
            stop()
            thread.join(timeout=30)
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
