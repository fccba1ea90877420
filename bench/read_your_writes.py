"""Read-your-writes tokens: a write on one connection, then a read on another sent with the
write's cursor (`Almanac-Min-Change`), through one server process and through `--workers 2`.

Each server is the real command (`almanac serve`, the embedded store with the bundled data,
answers reused, a budget refusing nothing) on a data directory of its own. The writer keeps
one connection (an admin key); each read comes on a new connection, which with 2 workers
either worker may take (which one answered is told by its `X-Request-ID`: each process gives
its IDs a random prefix of its own). Before the pairs, both workers keep the page's answer.

For each pair: the description of one benchmark written (`updateBenchmark`), its
`Almanac-Change-Cursor` read, and the benchmark read back with it. A read that does not show
its write is a miss (bar: 0). In turn with them, as many pairs without the header, for
comparison: what a reader on another process may see without the token. Printed: misses, the
reads' latency (client side: p50, p90, p99, max) and the server's own count of minimum-change
waits by outcome (`almanac_min_change_waits_total`), with the mean wait of those that waited
and their distribution (`almanac_min_change_wait_seconds`). The writer's own operations count
among the waits too (its key's last change is its minimum), applied at once.

    .venv/bin/python bench/read_your_writes.py [--pairs 200]
"""

import argparse
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

from bench.run import SLUG
from bench.workers import admin_key, answering, serving

READ = {"query": f'query Described {{ benchmark(slug: "{SLUG}") {{ description }} }}'}
DESCRIBE = (
    "mutation($text: String!) { "
    f'updateBenchmark(slug: "{SLUG}", input: {{description: $text}}) {{ description }} }}'
)
WAITS = "almanac_min_change_waits"
WAIT_SECONDS = "almanac_min_change_wait_seconds"
STARTING_SECONDS = 300
WRITER_UNREFUSED = {  # the writer's key: nor its writes
    "ALMANAC_KEY_BUCKET_CAPACITY": "1000000000",
    "ALMANAC_KEY_RESTORE_RATE": "1000000000",
}


@dataclass
class Pairs:
    misses: int = 0
    by_other: int = 0  # reads answered by a process other than the writer's
    read_ms: list[float] = field(default_factory=list)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=200)
    args = parser.parse_args()
    print(f"{args.pairs} pairs: a write on one connection, a read on another\n")
    for workers in (1, 2):
        with tempfile.TemporaryDirectory(prefix="almanac-bench-ryw-") as scratch:
            data = Path(scratch) / "data"
            with serving(data, workers, WRITER_UNREFUSED, STARTING_SECONDS) as (url, _):
                key = admin_key(data)
                for _ in range(20):  # every worker keeps the answer before the writes
                    httpx.post(f"{url}/graphql", json=READ)
                before = waits(url)
                tokened, bare = pairs(url, key, args.pairs)
                after = waits(url)
        report(workers, tokened, bare, before, after)


def pairs(url: str, key: str, count: int) -> tuple[Pairs, Pairs]:
    """`count` pairs with the token, and as many without, taken in turn (so that the load of
    the moment weighs on both alike)."""
    tokened, bare = Pairs(), Pairs()
    endpoint = f"{url}/graphql"
    # The reader keeps no connection: each read opens one, which either worker may take.
    fresh = httpx.Limits(max_keepalive_connections=0)
    with (
        httpx.Client(headers={"Authorization": f"Bearer {key}"}, timeout=30) as writer,
        httpx.Client(limits=fresh, timeout=30) as reader,
    ):
        for n in range(count * 2):
            found, with_token = (tokened, True) if n % 2 == 0 else (bare, False)
            text = f"Written then read ({'with' if with_token else 'without'} token, {n})"
            written = writer.post(endpoint, json={"query": DESCRIBE, "variables": {"text": text}})
            if (cursor := written.headers.get("almanac-change-cursor")) is None:
                raise RuntimeError(f"the write named no change: {written.text}")
            headers = {"almanac-min-change": cursor} if with_token else {}
            began = time.perf_counter()
            read = reader.post(endpoint, json=READ, headers=headers)
            found.read_ms.append((time.perf_counter() - began) * 1000)
            seen = read.json()["data"]["benchmark"]["description"]
            found.misses += seen != text
            found.by_other += answering(read) != answering(written)
    return tokened, bare


def waits(url: str) -> dict[str, float]:
    """The server's minimum-change waits so far (every worker's): by outcome, and the waits'
    total seconds and count."""
    counted: dict[str, float] = {}
    text = httpx.get(f"{url}/metrics", timeout=30).text
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == f"{WAITS}_total":
                counted[sample.labels["outcome"]] = sample.value
            elif sample.name in (f"{WAIT_SECONDS}_sum", f"{WAIT_SECONDS}_count"):
                counted[sample.name.rsplit("_", 1)[1]] = sample.value
            elif sample.name == f"{WAIT_SECONDS}_bucket":
                counted[f"le {sample.labels['le']}"] = sample.value
    return counted


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def report(
    workers: int, tokened: Pairs, bare: Pairs, before: dict[str, float], after: dict[str, float]
) -> None:
    moved = {name: after.get(name, 0.0) - before.get(name, 0.0) for name in after}
    outcomes = ", ".join(
        f"{name} {moved.get(name, 0):.0f}" for name in ("applied", "waited", "timed_out")
    )
    waited = moved.get("count", 0.0)
    within = [
        f"<= {float(name.removeprefix('le ')) * 1000:g} ms: {count:.0f}"
        for name, count in moved.items()
        if name.startswith("le ") and name != "le +Inf"
    ]
    mean = moved.get("sum", 0.0) / waited * 1000 if waited else 0.0
    label = f"{workers} worker{'s' if workers > 1 else ''}"
    print(
        f"{label}: with Almanac-Min-Change, {tokened.misses} reads of {len(tokened.read_ms)} "
        f"missed their write (bar: 0); {tokened.by_other} answered by another process than "
        f"the write's.\n"
        f"  read latency ms: p50 {statistics.median(tokened.read_ms):.1f}, "
        f"p90 {percentile(tokened.read_ms, 0.9):.1f}, p99 {percentile(tokened.read_ms, 0.99):.1f}, "
        f"max {max(tokened.read_ms):.1f}\n"
        f"  server's waits: {outcomes}; mean wait of those that waited {mean:.1f} ms\n"
        f"  waits by length (cumulative): {', '.join(within[:6])}\n"
        f"  without the header: {bare.misses} of {len(bare.read_ms)} missed their write "
        f"({bare.by_other} answered by another process); read p50 "
        f"{statistics.median(bare.read_ms):.1f} ms, p99 {percentile(bare.read_ms, 0.99):.1f} ms"
    )


if __name__ == "__main__":
    main()
