"""Answers that survive unrelated writes: page loads while an editor writes, on a SYNTHETIC
almanac (bench/synthetic.py: no result is real), answer reuse on, one server process.

wrk loads the site's page query for 20 distinct benchmarks (one category), in interleaved
rounds: quiet; with one write a second to a benchmark none of the 20 pages shows (another
category); and with one write a second to a benchmark most of the pages show (a sibling).
Each round reports throughput and p99; the rounds with writes also report how many queries
the server executed per write (`almanac_operations_executed_total`, less the writes), beside
how many of the 20 pages read the benchmark written (its page, its family, the siblings a page
reads).

Bars (issue 19): with unrelated writes, throughput >= 0.9x the quiet rounds' and p99 <= 2x;
with related writes, <= 1 execution per affected page per write.

    .venv/bin/python bench/live_edits.py [--benchmarks 1000] [--rounds 3] [--seconds 10]
"""

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import httpx

from bench.run import CONTRACT, ROOT, Result, latency, lua_string
from bench.scale import environment, start, timed_import
from bench.synthetic import synthetic_almanac

PAGES = 20
ADMIN = ("--scope", "admin")
WRITE = """mutation($slug: String!, $note: String!) {
  updateBenchmark(slug: $slug, input: {note: $note}) { revision } }"""
# What a page reads around it: its family, and the siblings it shows (the contract's first 6;
# a page reads no more: schema.types.selections.siblings_shown).
READS = """query($slug: String!) { benchmark(slug: $slug) {
  parent { slug } tracks { slug } siblings(first: 6) { nodes { slug } } } }"""
EXECUTED = re.compile(r"^almanac_operations_executed_total ([\d.e+]+)$", re.M)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmarks", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=16)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="almanac-live-") as scratch:
        data_dir, file = Path(scratch) / "data", Path(scratch) / "synthetic.json"
        almanac = synthetic_almanac(args.benchmarks)
        file.write_text(json.dumps(almanac))
        timed_import(file, data_dir)
        key = admin_key(data_dir)
        by_category: dict[str, list[str]] = {}
        for doc in almanac["benchmarks"]:
            by_category.setdefault(doc["category"], []).append(doc["slug"])
        shown_category, *_, other_category = sorted(by_category, key=lambda c: -len(by_category[c]))
        pages = by_category[shown_category][:PAGES]
        unrelated = by_category[other_category][0]
        script = Path(scratch) / "pages.lua"
        script.write_text(pages_script(pages))

        process, url = start_with_reuse(data_dir)
        try:
            related = first_sibling(url, pages[0])  # what most pages show
            affected = pages_reading(url, pages, related)
            results: dict[str, list[Result]] = {"quiet": [], "unrelated": [], "related": []}
            per_write: list[float] = []
            for _ in range(args.rounds):
                for kind in results:
                    target = {"quiet": None, "unrelated": unrelated, "related": related}[kind]
                    result, executions, writes = round_of(url, script, key, target, args)
                    results[kind].append(result)
                    if kind == "related" and writes:
                        per_write.append(executions / writes)
                    print(
                        f"{kind:10} {result.requests_per_second:8.0f} req/s  "
                        f"p99 {result.p99_ms:7.1f} ms  {writes} writes  "
                        f"{executions:.0f} executions",
                        flush=True,
                    )
        finally:
            process.terminate()
            process.wait()
    report(results, per_write, affected)


def start_with_reuse(data_dir: Path) -> tuple[subprocess.Popen[bytes], str]:
    """A server on `data_dir` with answer reuse on (bench.scale's turns it off)."""
    process, url = start(data_dir, ALMANAC_RESPONSE_CACHE_BYTES="67108864")
    return process, url


def admin_key(data_dir: Path) -> str:
    made = subprocess.run(
        [sys.executable, "-m", "server.cli", *("keys", "create", "--name", "editor"), *ADMIN],
        cwd=ROOT,
        env=environment(data_dir),
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return made.strip()


def pages_script(slugs: list[str]) -> str:
    """A wrk script POSTing the page query for each slug in turn."""
    query = CONTRACT.read_text(encoding="utf-8")
    bodies = [json.dumps({"query": query, "variables": {"slug": slug}}) for slug in slugs]
    listed = ",\n".join(lua_string(body) for body in bodies)
    return (
        'wrk.method = "POST"\n'
        'wrk.headers["Content-Type"] = "application/json"\n'
        f"local bodies = {{\n{listed}\n}}\n"
        "local i = 0\n"
        "request = function()\n"
        "  i = i % #bodies + 1\n"
        "  return wrk.format(nil, nil, nil, bodies[i])\n"
        "end\n"
    )


def pages_reading(url: str, pages: list[str], slug: str) -> int:
    """How many of the pages read benchmark `slug` (theirs, their family, siblings read)."""
    count = 0
    for page in pages:
        found = httpx.post(
            f"{url}/graphql", json={"query": READS, "variables": {"slug": page}}
        ).json()["data"]["benchmark"]
        family = [found["parent"]] + found["tracks"] + found["siblings"]["nodes"]
        count += slug == page or slug in {item["slug"] for item in family if item}
    return count


def first_sibling(url: str, page: str) -> str:
    found = httpx.post(f"{url}/graphql", json={"query": READS, "variables": {"slug": page}})
    slug: str = found.json()["data"]["benchmark"]["siblings"]["nodes"][0]["slug"]
    return slug


def executed(url: str) -> float:
    match = EXECUTED.search(httpx.get(f"{url}/metrics").text)
    return float(match[1]) if match else 0.0


def round_of(
    url: str, script: Path, key: str, target: str | None, args: argparse.Namespace
) -> tuple[Result, float, int]:
    """One wrk run, with a writer to `target` once a second meanwhile (None: no writes): its
    result, the queries executed meanwhile (not the writes themselves), and the writes made."""
    stop, writes = threading.Event(), [0]

    def writer() -> None:
        with httpx.Client(headers={"Authorization": f"Bearer {key}"}, timeout=30) as client:
            while not stop.wait(1.0):
                note = f"Edited by the live-edits bench, write {writes[0]}."
                answer = client.post(
                    f"{url}/graphql",
                    json={"query": WRITE, "variables": {"slug": target, "note": note}},
                ).json()
                assert "errors" not in answer, answer
                writes[0] += 1

    base = ["wrk", "-t1", f"-c{args.connections}", "-s", str(script), "--latency"]
    subprocess.run([*base, "-d1s", url + "/graphql"], check=True, capture_output=True)
    before = executed(url)
    thread = threading.Thread(target=writer) if target else None
    if thread:
        thread.start()
    output = subprocess.run(
        [*base, f"-d{args.seconds}s", url + "/graphql"], check=True, capture_output=True, text=True
    ).stdout
    stop.set()
    if thread:
        thread.join()
    if "Non-2xx" in output:
        raise RuntimeError(f"some responses failed\n{output}")
    result = Result(
        name=target or "quiet",
        requests_per_second=float(re.search(r"Requests/sec:\s+([\d.]+)", output)[1]),  # type: ignore[index]
        p50_ms=latency(output, "50%"),
        p99_ms=latency(output, "99%"),
    )
    return result, executed(url) - before - writes[0], writes[0]


def report(results: dict[str, list[Result]], per_write: list[float], affected: int) -> None:
    quiet = results["quiet"]
    rps = statistics.median(r.requests_per_second for r in quiet)
    p99 = statistics.median(r.p99_ms for r in quiet)
    print(f"\n{'':28}{'req/s':>8}{'x quiet':>9}{'p99 ms':>9}{'x quiet':>9}")
    for kind, runs in results.items():
        # Each round beside the quiet round run just before it, then the median ratio.
        throughput = statistics.median(
            run.requests_per_second / before.requests_per_second
            for run, before in zip(runs, quiet, strict=True)
        )
        tail = statistics.median(
            run.p99_ms / before.p99_ms for run, before in zip(runs, quiet, strict=True)
        )
        label = {
            "quiet": "quiet",
            "unrelated": "unrelated write each s",
            "related": "related write each s",
        }[kind]
        print(
            f"{label:28}{statistics.median(r.requests_per_second for r in runs):>8.0f}"
            f"{throughput:>9.2f}{statistics.median(r.p99_ms for r in runs):>9.1f}{tail:>9.2f}"
        )
    print(
        f"\nrelated writes: {statistics.median(per_write) if per_write else 0:.1f} executions "
        f"per write; {affected} of the {PAGES} pages read the benchmark written "
        f"(bar: <= {affected} per write).\nQuiet median: {rps:.0f} req/s, p99 {p99:.1f} ms. "
        "Bars: unrelated writes >= 0.9x throughput and <= 2x p99."
    )


if __name__ == "__main__":
    main()
