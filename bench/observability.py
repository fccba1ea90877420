"""What request logs and metrics cost on the warm path, side by side in one run.

`almanac serve` (the real command: its protocol, its log configuration) answers the contract
request, POSTed and answered from its kept answer, under three configurations, alternating
round by round so that the machine's drift falls on all of them alike:

- off: no request log line (`ALMANAC_LOG_LEVEL=warning`) and no metrics (`ALMANAC_METRICS=false`);
- text: the defaults, one text line a request (to a file) and Prometheus metrics;
- json: one JSON line a request (`ALMANAC_LOG_FORMAT=json`) and metrics.

The server runs on core 0 and wrk (Debian package `wrk`) on core 1. Request IDs are made and
returned in all three: they are the API's, not the log's.

    .venv/bin/python bench/observability.py [--seconds 8] [--rounds 3]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from statistics import median

import httpx

from bench.run import CONTRACT, HOST, SLUG, UNREFUSING_BUDGET, free_port, post_script

CONFIGURATIONS = {
    "off": {"ALMANAC_METRICS": "false", "ALMANAC_LOG_LEVEL": "warning"},
    "text": {},
    "json": {"ALMANAC_LOG_FORMAT": "json"},
}
# Each alone, to see which costs what (--parts).
PARTS = {
    "metrics": {"ALMANAC_LOG_LEVEL": "warning"},
    "log": {"ALMANAC_METRICS": "false"},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--parts", action="store_true", help="also metrics alone, log alone")
    args = parser.parse_args()
    configurations = {**CONFIGURATIONS, **(PARTS if args.parts else {})}
    if shutil.which("wrk") is None:
        sys.exit("wrk is needed: apt-get install wrk")
    body = json.dumps({"query": CONTRACT.read_text(encoding="utf-8"), "variables": {"slug": SLUG}})
    results: dict[str, list[Run]] = {name: [] for name in configurations}
    with tempfile.TemporaryDirectory() as scratch:
        script = post_script(Path(scratch), body)
        for round_number in range(args.rounds):
            for name, settings in configurations.items():
                log = Path(scratch) / f"{name}-{round_number}.log"
                run = measure({**UNREFUSING_BUDGET, **settings}, body, script, log, args)
                lines = sum(1 for _ in log.open()) if log.exists() else 0
                results[name].append(run)
                print(
                    f"round {round_number + 1} {name:7} {run.requests_per_second:>9.0f} req/s "
                    f"{run.cpu_us_per_request:>7.1f} µs CPU a request  ({lines} log lines)"
                )
    rate = {name: median(run.requests_per_second for run in runs) for name, runs in results.items()}
    cpu = {name: median(run.cpu_us_per_request for run in runs) for name, runs in results.items()}
    print(f"\n{'':8}{'req/s':>9}{'vs off':>9}{'µs CPU':>9}{'vs off':>9}   (medians)")
    for name in results:
        print(
            f"{name:8}{rate[name]:>9.0f}{rate[name] / rate['off'] - 1:>+9.1%}"
            f"{cpu[name]:>9.1f}{cpu[name] / cpu['off'] - 1:>+9.1%}"
        )
    print(
        "\nBar: request logs and metrics cost <= 10% of the warm path's throughput. The server "
        "has one core: its throughput is the inverse of its CPU time a request."
    )


@dataclass(frozen=True)
class Run:
    requests_per_second: float
    cpu_us_per_request: float
    """The server's CPU time a request: steady where throughput is shaken by other loads."""


def measure(
    settings: dict[str, str], body: str, script: Path, log: Path, args: argparse.Namespace
) -> Run:
    port = free_port()
    data = tempfile.mkdtemp(prefix="almanac-bench-")
    environment = {
        **{k: v for k, v in os.environ.items() if not k.startswith("ALMANAC_")},
        "ALMANAC_DATA_DIR": data,
        "ALMANAC_SHUTDOWN_DRAIN_SECONDS": "0",
        **settings,
    }
    command = ["taskset", "-c", "0", sys.executable, "-m", "server.cli", "serve"]
    with log.open("w") as output:
        process = subprocess.Popen(
            [*command, "--host", HOST, "--port", str(port)],
            env=environment,
            stdout=subprocess.DEVNULL,
            stderr=output,
        )
        try:
            url = f"http://{HOST}:{port}/graphql"
            wait_until_up(url, body)
            wrk = ["taskset", "-c", "1", "wrk", "-t1", f"-c{args.connections}", "-s", str(script)]
            subprocess.run([*wrk, "-d2s", url], check=True, capture_output=True)
            cpu_before = cpu_seconds(process.pid)
            report = subprocess.run(
                [*wrk, f"-d{args.seconds}s", url], check=True, capture_output=True, text=True
            ).stdout
            cpu = cpu_seconds(process.pid) - cpu_before
        finally:
            process.terminate()
            process.wait(timeout=10)
            shutil.rmtree(data, ignore_errors=True)
    if "Non-2xx" in report:
        raise RuntimeError(f"some responses failed:\n{report}")
    [rate] = [line.split()[1] for line in report.splitlines() if line.startswith("Requests/sec")]
    [count] = [line.split()[0] for line in report.splitlines() if " requests in " in line]
    return Run(float(rate), cpu / int(count) * 1e6)


def cpu_seconds(pid: int) -> float:
    """The CPU time (user and system) a process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_until_up(url: str, body: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            answer = httpx.post(url, content=body, headers={"content-type": "application/json"})
            assert "errors" not in answer.json(), answer.text
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise RuntimeError("the server did not start")


if __name__ == "__main__":
    main()
