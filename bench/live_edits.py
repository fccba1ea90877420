"""Readers under live edits: page loads while an editor writes, on a SYNTHETIC almanac
(bench/synthetic.py: no result is real), answer reuse on, one server process.

wrk loads the site's page query for 20 distinct benchmarks of one category, in interleaved
rounds: quiet; with one write a second to a benchmark none of the 20 pages shows (another
category: "unrelated"); and with one write a second to a benchmark that all 20 pages show (a
sibling each shows, or the page's own: "related"). Each write sets that benchmark's description
to "... write N.", which every one of the 20 pages shows.

Two servers are measured in the same run, round by round: "today" (a checkout given with
`--baseline`, else this one with ALMANAC_MAX_STALENESS_SECONDS=0) and "fresh" (this checkout,
the default bound of 1 s: answers refreshed ahead of their readers, a retired one served,
marked, until then). Each gets a copy of the same data directory.

Each round reports throughput and p99 (and their ratio to the quiet round just before, on the
same server), the server's CPU per request, and the recomputations a write caused. The related
rounds also report the staleness: for each write, the time from its answer until every one of
the 20 pages served the new value (wrk's Lua sees each response's body), and the largest
`extensions.freshness.age` (seconds past the change it misses) any response carried.

Bars (issue 30), related writes against quiet: p99 <= 2x, throughput >= 0.85x; staleness p99
<= 1.2 s; no answer older than the bound (1 s) past its change. (Issue 19: unrelated writes
>= 0.9x throughput and <= 2x p99.)

    .venv/bin/python bench/live_edits.py [--benchmarks 1000] [--rounds 3] [--seconds 10]
        [--baseline /path/to/a/checkout/of/main]
"""

import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bench.run import CONTRACT, ROOT, free_port, latency, lua_string, wait_until_up
from bench.scale import environment, timed_import
from bench.synthetic import synthetic_almanac
from bench.workers import admin_key

PAGES = 20
BOUND_SECONDS = 1.0
KINDS = ("quiet", "unrelated", "related")
WRITE = """mutation($slug: String!, $description: String!) {
  updateBenchmark(slug: $slug, input: {description: $description}) { revision } }"""
# What a page reads around it: its family, and the siblings it shows (the contract's first 6).
# Its `rateLimit` makes the answer the caller's own, so it is never kept: choosing the pages
# leaves no answer behind on the server asked, for it to refresh after every write.
READS = """query($slug: String!) { rateLimit { cost } benchmark(slug: $slug) {
  parent { slug } tracks { slug } siblings(first: 6) { nodes { slug } } } }"""
COUNTERS = {
    "executed": re.compile(r"^almanac_operations_executed_total ([\d.e+]+)$", re.M),
    "refreshed": re.compile(r'^almanac_refreshes_total\{outcome="refreshed"\} ([\d.e+]+)$', re.M),
}
TICKS = os.sysconf("SC_CLK_TCK")


@dataclass
class Round:
    server: str
    kind: str
    requests_per_second: float
    p99_ms: float
    requests: int
    cpu_seconds: float
    writes: int = 0
    recomputed: float = 0.0
    staleness: list[float] = field(default_factory=list)  # seconds, one per write fully seen
    oldest_age: float = 0.0  # the largest extensions.freshness.age seen
    unmarked: int = 0  # responses without extensions.freshness

    @property
    def cpu_ms_per_request(self) -> float:
        return 1000 * self.cpu_seconds / max(self.requests, 1)


@dataclass
class Server:
    name: str
    process: subprocess.Popen[bytes]
    url: str


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmarks", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--baseline", type=Path, help="a checkout to serve as today's")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="almanac-live-") as scratch:
        data_dir, file = Path(scratch) / "data", Path(scratch) / "synthetic.json"
        almanac = synthetic_almanac(args.benchmarks)
        file.write_text(json.dumps(almanac))
        timed_import(file, data_dir)
        key = admin_key(data_dir)
        for name in ("today", "fresh"):
            shutil.copytree(data_dir, Path(scratch) / name)
        with servers(Path(scratch), args.baseline) as (today, fresh):
            # Chosen on today's server, which keeps nothing of it (READS).
            pages, related, unrelated = chosen(today.url, almanac)
            script = Path(scratch) / "pages.lua"
            script.write_text(pages_script(pages))
            rounds: list[Round] = []
            for _ in range(args.rounds):
                for server in (today, fresh):
                    for kind in KINDS:
                        target = {"quiet": None, "unrelated": unrelated, "related": related}[kind]
                        done = round_of(server, kind, script, key, target, args, Path(scratch))
                        rounds.append(done)
                        print(describe(done), flush=True)
    report(rounds)


@contextmanager
def servers(scratch: Path, baseline: Path | None) -> Iterator[tuple[Server, Server]]:
    today_settings = {} if baseline else {"ALMANAC_MAX_STALENESS_SECONDS": "0"}
    today = serve("today", baseline or ROOT, scratch / "today", **today_settings)
    try:
        fresh = serve("fresh", ROOT, scratch / "fresh")
        try:
            yield today, fresh
        finally:
            fresh.process.terminate()
            fresh.process.wait()
    finally:
        today.process.terminate()
        today.process.wait()


def serve(name: str, root: Path, data_dir: Path, **settings: str) -> Server:
    """`almanac serve` from the checkout `root` on `data_dir`, answer reuse on."""
    port = free_port()
    env = environment(
        data_dir,
        ALMANAC_LOG_LEVEL="warning",
        ALMANAC_RESPONSE_CACHE_BYTES="67108864",
        PYTHONPATH=str(root),
        **settings,
    )
    command = [sys.executable, "-m", "server.cli", "serve", "--port", str(port)]
    process = subprocess.Popen(
        command, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    wait_until_up(url)
    return Server(name, process, url)


def chosen(url: str, almanac: dict[str, list[dict[str, str]]]) -> tuple[list[str], str, str]:
    """The 20 pages (of the largest category), a benchmark all of them show (the first sibling
    of its first page), and one none of them shows (of another category)."""
    by_category: dict[str, list[str]] = {}
    for doc in almanac["benchmarks"]:
        by_category.setdefault(doc["category"], []).append(doc["slug"])
    shown, *_, other = sorted(by_category, key=lambda c: -len(by_category[c]))
    related = read_around(url, by_category[shown][0])["siblings"]["nodes"][0]["slug"]
    pages = [slug for slug in by_category[shown] if related in family(url, slug)][:PAGES]
    if len(pages) < PAGES:
        raise RuntimeError(f"only {len(pages)} pages show {related}")
    return pages, related, by_category[other][0]


def family(url: str, page: str) -> list[str]:
    """The benchmarks a page shows: its own, its family's, the 6 siblings it reads (last)."""
    benchmark = read_around(url, page)
    shown = [benchmark["parent"], *benchmark["tracks"]]
    siblings = [node["slug"] for node in benchmark["siblings"]["nodes"]]
    return [page, *(item["slug"] for item in shown if item), *siblings]


def read_around(url: str, page: str) -> dict[str, Any]:
    found = httpx.post(f"{url}/graphql", json={"query": READS, "variables": {"slug": page}})
    benchmark: dict[str, Any] = found.json()["data"]["benchmark"]
    return benchmark


def pages_script(slugs: list[str]) -> str:
    """A wrk script POSTing the page query for each slug in turn, which notes, for each page,
    when it first showed each write (a description ending "write N."), the largest
    `extensions.freshness.age`, and the responses without `extensions.freshness`."""
    query = CONTRACT.read_text(encoding="utf-8")
    bodies = [json.dumps({"query": query, "variables": {"slug": slug}}) for slug in slugs]
    listed = ",\n".join(lua_string(body) for body in bodies)
    return (
        'local ffi = require("ffi")\n'
        "ffi.cdef[[ typedef struct { long s; long us; } tv_t;"
        " int gettimeofday(tv_t *tv, void *tz); ]]\n"
        'local tv = ffi.new("tv_t")\n'
        "local function now() ffi.C.gettimeofday(tv, nil)"
        " return tonumber(tv.s) + tonumber(tv.us) / 1e6 end\n"
        'wrk.method = "POST"\n'
        'wrk.headers["Content-Type"] = "application/json"\n'
        f"local bodies = {{\n{listed}\n}}\n"
        "local i = 0\n"
        "newest, seen, oldest, unmarked = {}, '', 0, 0\n"
        "request = function()\n"
        "  i = i % #bodies + 1\n"
        "  return wrk.format(nil, nil, nil, bodies[i])\n"
        "end\n"
        "response = function(status, headers, body)\n"
        '  local page = string.match(body, \'"slug":"(.-)"\')\n'
        '  local write = tonumber(string.match(body, "write (%d+)%.") or -1)\n'
        "  if page and write > (newest[page] or -1) then\n"
        "    newest[page] = write\n"
        '    seen = seen .. string.format("%s %d %.4f\\n", page, write, now())\n'
        "  end\n"
        "  local age = tonumber(string.match(body, '\"age\":([%d%.]+)') or 0)\n"
        "  if age > oldest then oldest = age end\n"
        "  if not string.find(body, '\"freshness\"', 1, true) then unmarked = unmarked + 1 end\n"
        "end\n"
        "local threads = {}\n"
        "setup = function(thread) table.insert(threads, thread) end\n"
        "done = function(summary, latency, requests)\n"
        '  local out = io.open(os.getenv("LIVE_EDITS_SEEN"), "w")\n'
        "  for _, t in ipairs(threads) do\n"
        '    out:write(string.format("oldest %f\\nunmarked %d\\n", t:get("oldest"),'
        ' t:get("unmarked")))\n'
        '    out:write(t:get("seen"))\n'
        "  end\n"
        '  out:write(string.format("requests %d\\n", summary.requests))\n'
        "  out:close()\n"
        "end\n"
    )


def counted(url: str) -> dict[str, float]:
    text = httpx.get(f"{url}/metrics").text
    return {
        name: float(match[1]) if (match := pattern.search(text)) else 0.0
        for name, pattern in COUNTERS.items()
    }


def cpu_seconds(process: subprocess.Popen[bytes]) -> float:
    """The CPU time (user and system) the server process has used."""
    fields = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def writer(url: str, key: str, target: str, stop: threading.Event) -> list[tuple[int, float]]:
    """Write to `target` once a second until `stop`; each write's number and when its answer
    came (Unix time), filled in as they are made."""
    answered: list[tuple[int, float]] = []

    def write() -> None:
        with httpx.Client(headers={"Authorization": f"Bearer {key}"}, timeout=30) as client:
            number = int(time.time())  # distinct across rounds
            while not stop.wait(1.0):
                number += 1
                note = f"Edited by the live-edits bench, write {number}."
                answer = client.post(
                    f"{url}/graphql",
                    json={"query": WRITE, "variables": {"slug": target, "description": note}},
                ).json()
                assert "errors" not in answer, answer
                answered.append((number, time.time()))

    threading.Thread(target=write, daemon=True).start()
    return answered


def round_of(
    server: Server,
    kind: str,
    script: Path,
    key: str,
    target: str | None,
    args: argparse.Namespace,
    scratch: Path,
) -> Round:
    """One wrk run on `server`, with a writer to `target` once a second meanwhile (None: no
    writes)."""
    seen_file = scratch / "seen.txt"
    base = ["wrk", "-t1", f"-c{args.connections}", "-s", str(script), "--latency"]
    env = {**os.environ, "LIVE_EDITS_SEEN": str(seen_file)}
    subprocess.run(
        [*base, "-d1s", server.url + "/graphql"], check=True, capture_output=True, env=env
    )
    before, cpu_before = counted(server.url), cpu_seconds(server.process)
    stop = threading.Event()
    answered = writer(server.url, key, target, stop) if target else []
    output = subprocess.run(
        [*base, f"-d{args.seconds}s", server.url + "/graphql"],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    ).stdout
    stop.set()
    cpu = cpu_seconds(server.process) - cpu_before
    if "Non-2xx" in output:
        raise RuntimeError(f"some responses failed\n{output}")
    after = counted(server.url)
    writes = len(answered)
    done = Round(
        server=server.name,
        kind=kind,
        requests_per_second=float(re.search(r"Requests/sec:\s+([\d.]+)", output)[1]),  # type: ignore[index]
        p99_ms=latency(output, "99%"),
        requests=0,
        cpu_seconds=cpu,
        writes=writes,
        recomputed=sum(after.values()) - sum(before.values()) - writes,
    )
    read_seen(seen_file, done, answered)
    return done


def read_seen(file: Path, done: Round, answered: list[tuple[int, float]]) -> None:
    """What wrk's script noted: the responses, the oldest age, the writes each page showed."""
    first: dict[str, list[tuple[int, float]]] = {}
    for line in file.read_text().splitlines():
        name, *values = line.split()
        if name == "requests":
            done.requests = int(values[0])
        elif name == "oldest":
            done.oldest_age = max(done.oldest_age, float(values[0]))
        elif name == "unmarked":
            done.unmarked += int(values[0])
        else:
            first.setdefault(name, []).append((int(values[0]), float(values[1])))
    for number, at in answered:
        # When each page first showed this write or a later one; the write is seen once all do.
        shown = [min((t for n, t in seen if n >= number), default=None) for seen in first.values()]
        if len(shown) == PAGES and all(t is not None for t in shown):
            done.staleness.append(max(t for t in shown if t is not None) - at)


def describe(done: Round) -> str:
    line = (
        f"{done.server:6} {done.kind:10} {done.requests_per_second:8.0f} req/s  "
        f"p99 {done.p99_ms:7.1f} ms  {done.cpu_ms_per_request:5.2f} ms CPU/request"
    )
    if done.kind != "quiet":
        line += f"  {done.writes} writes  {done.recomputed:.0f} recomputed"
    if done.kind == "related":
        worst = max(done.staleness, default=math.nan)
        line += f"  staleness max {worst:.2f} s  oldest age {done.oldest_age:.3f} s"
    return line


def percentile(values: list[float], share: float) -> float:
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(share * len(ordered)) - 1)]


def report(rounds: list[Round]) -> None:
    print(
        f"\n{'':24}{'req/s':>8}{'x quiet':>9}{'p99 ms':>9}{'x quiet':>9}"
        f"{'CPU ms/req':>12}{'x quiet':>9}"
    )
    for server in ("today", "fresh"):
        quiet = [r for r in rounds if r.server == server and r.kind == "quiet"]
        for kind in KINDS:
            runs = [r for r in rounds if r.server == server and r.kind == kind]
            # Each round beside the quiet round run just before it, then the median ratio.
            pairs = list(zip(runs, quiet, strict=True))
            throughput = statistics.median(
                r.requests_per_second / q.requests_per_second for r, q in pairs
            )
            tail = statistics.median(r.p99_ms / q.p99_ms for r, q in pairs)
            cpu = statistics.median(r.cpu_ms_per_request / q.cpu_ms_per_request for r, q in pairs)
            print(
                f"{server + ' ' + kind:24}"
                f"{statistics.median(r.requests_per_second for r in runs):>8.0f}{throughput:>9.2f}"
                f"{statistics.median(r.p99_ms for r in runs):>9.1f}{tail:>9.2f}"
                f"{statistics.median(r.cpu_ms_per_request for r in runs):>12.2f}{cpu:>9.2f}"
            )
    for server in ("today", "fresh"):
        related_report(
            server,
            [r for r in rounds if r.server == server and r.kind == "related"],
            [r for r in rounds if r.server == server and r.kind == "quiet"],
        )


def related_report(server: str, related: list[Round], quiet: list[Round]) -> None:
    """The related rounds of one server: recomputations and their CPU, staleness, ages."""
    staleness = [s for r in related for s in r.staleness]
    writes = sum(r.writes for r in related)
    recomputed = sum(r.recomputed for r in related)
    # The CPU a recomputation costs: the related rounds' CPU beyond what their requests would
    # have cost at the quiet rounds' rate, over the recomputations made.
    extra = sum(
        r.cpu_seconds - r.requests * q.cpu_seconds / max(q.requests, 1)
        for r, q in zip(related, quiet, strict=True)
    )
    print(
        f"\n{server}, related writes: {recomputed / max(writes, 1):.1f} recomputations a write, "
        f"{1000 * extra / max(recomputed, 1):.1f} ms CPU each (beyond the quiet rate); "
        f"staleness (write answered -> all {PAGES} pages show it) over {len(staleness)} writes: "
        f"p50 {percentile(staleness, 0.5):.2f} s, p99 {percentile(staleness, 0.99):.2f} s "
        f"(bar <= 1.2 s); largest age past its change "
        f"{max((r.oldest_age for r in related), default=0):.3f} s (bar <= {BOUND_SECONDS:g} s); "
        f"responses without extensions.freshness: {sum(r.unmarked for r in related)}"
    )


if __name__ == "__main__":
    main()
