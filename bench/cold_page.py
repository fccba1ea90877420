"""What a cold page costs against graphql-core's own floor, in one process and one run.

A cold page is the site's page query (contract/benchmark-page.graphql) executed anew: answer
reuse off (ALMANAC_RESPONSE_CACHE_BYTES=0), so every request runs the schema and reads the
store. Measured side by side, in interleaved rounds (each round runs every kind in turn):
- (a) app: POSTed through the whole app (httpx's ASGITransport: no sockets);
- (b) schema: Strawberry's `schema.execute` with a fresh context (the app's document memory,
  so parsing is skipped as in the app): (a) minus HTTP;
- (c) floor: graphql-core executing the same parsed document, against a schema built from
  schema.graphql, with its default resolvers over (a)'s JSON answer as plain dicts: what
  GraphQL execution itself costs for this page, with no data to find.
On the bundled data and on a SYNTHETIC 1,000-benchmark almanac (bench/synthetic.py).
Bar (issue 19): (a) ≤ 2x (c). Each kind's CPU time per request is printed too (the process's,
the store's thread included): what one recomputation of a page costs (issue 30).

    .venv/bin/python bench/cold_page.py [--rounds 40] [--per-round 5] [--sizes 0 1000]
    .venv/bin/python bench/cold_page.py --profile app   # cProfile of (a), top functions
    .venv/bin/python bench/cold_page.py --store-inline  # also (a), the store's reads inline
    .venv/bin/python bench/cold_page.py --against REV   # this tree beside REV's, interleaved

`--against REV` measures the code of git revision REV (its files, in a scratch directory) beside
this tree's: one process each, a round of each in turn, so that both meet the same load.
Size 0 is the bundled data. `--first-view` also measures (a) on each benchmark of the big
category in turn, so that no derived leaderboard kept from an earlier request helps.
"""

import argparse
import asyncio
import contextlib
import cProfile
import io
import json
import os
import pstats
import sqlite3
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import graphql
import httpx

from bench.run import CONTRACT, ROOT
from bench.run import SLUG as BUNDLED_SLUG
from bench.scale import PAGE_SLUG as SYNTHETIC_SLUG
from bench.scale import timed_import
from bench.synthetic import BIG_CATEGORY_SIZE, synthetic_almanac
from editing.importer import seed
from schema import new_context, schema
from server.app import create_app
from server.settings import Settings
from store import Store
from store.client import connect, prepare
from store.sqlite import SqliteStore

T = TypeVar("T")
SDL = ROOT / "schema.graphql"
SCRIPT = Path(__file__).resolve()
KINDS = ("app", "schema", "floor")
INLINE = "inline"  # (a) with the store's reads run on the event loop, not its thread


class Page:
    """The three ways of answering one benchmark's page, over one store."""

    def __init__(self, store: Store, data_dir: Path, slug: str) -> None:
        settings = Settings(
            data_dir=data_dir,
            response_cache_bytes=0,
            anonymous_bucket_capacity=1_000_000_000,
            anonymous_restore_rate=1_000_000_000,
            log_level="warning",
        )
        self.app = create_app(settings, store)
        self.store = store
        self.text = CONTRACT.read_text(encoding="utf-8")
        self.slug = slug
        transport = httpx.ASGITransport(app=self.app, client=("127.0.0.1", 50000))
        self.http = httpx.AsyncClient(transport=transport, base_url="http://almanac.test")
        self.floor_schema = graphql.build_schema(SDL.read_text(encoding="utf-8"))
        self.document = graphql.parse(self.text)
        self.answer: dict[str, Any] = {}

    async def start(self) -> None:
        """One request of each kind, checked: all three give the same answer."""
        self.answer = await self.through_app(self.slug)
        through_schema = await self.through_schema()
        floor = self.floor()
        assert through_schema == self.answer, "the schema and the app answer differently"
        assert floor == self.answer, "graphql-core's floor answers differently"

    async def through_app(self, slug: str) -> dict[str, Any]:
        body = {"query": self.text, "variables": {"slug": slug}}
        response = await self.http.post("/graphql", json=body)
        answer = response.json()
        if response.status_code != 200 or "errors" in answer:
            raise RuntimeError(f"the page of {slug} failed: {response.text[:300]}")
        data: dict[str, Any] = answer["data"]
        return data

    async def through_schema(self) -> dict[str, Any]:
        context = new_context(self.store)
        context.services = self.app.services.shared.graphql  # its document memory
        result = await schema.execute(
            self.text, variable_values={"slug": self.slug}, context_value=context
        )
        if result.errors or result.data is None:
            raise RuntimeError(f"the schema failed: {result.errors}")
        # What the app sends is JSON: the same types as (a)'s answer.
        data: dict[str, Any] = json.loads(json.dumps(result.data))
        return data

    def floor(self) -> dict[str, Any]:
        result = graphql.execute(
            self.floor_schema,
            self.document,
            root_value=self.answer,
            variable_values={"slug": self.slug},
        )
        assert not isinstance(result, Awaitable)  # default resolvers: all synchronous
        if result.errors or result.data is None:
            raise RuntimeError(f"graphql-core failed: {result.errors}")
        return result.data

    def runner(self, kind: str) -> Callable[[], Awaitable[object]]:
        async def floor() -> object:
            return self.floor()

        async def inline() -> object:
            with store_reads_inline():
                return await self.through_app(self.slug)

        return {
            "app": lambda: self.through_app(self.slug),
            "schema": self.through_schema,
            "floor": floor,
            INLINE: inline,
        }[kind]

    async def close(self) -> None:
        await self.http.aclose()
        await self.app.services.shared.budgets.close()


@contextlib.contextmanager
def store_reads_inline() -> Iterator[None]:
    """The embedded store's calls run on the calling thread, not handed to the store's own
    thread (what `SqliteStore._run` does) and back: what that hand-over costs. Safe here only
    because the bench runs one request at a time, so the store's thread is idle."""
    thread_run = SqliteStore._run

    async def inline(self: SqliteStore, work: Callable[[sqlite3.Connection], T]) -> T:
        return work(self._connection)

    SqliteStore._run = inline  # type: ignore[method-assign, assignment]
    try:
        yield
    finally:
        SqliteStore._run = thread_run  # type: ignore[method-assign]


async def store_trip(store: SqliteStore, trips: int = 2000) -> float:
    """ms for one empty call through the store's thread and back."""
    began = time.perf_counter()
    for _ in range(trips):
        await store._run(lambda connection: None)
    return (time.perf_counter() - began) * 1000 / trips


async def store_calls(page: Page, requests: int) -> tuple[float, float, float]:
    """Per (b) request, through the store's thread: its store calls, the ms they were awaited,
    and the ms of their work (SQLite and decoding) in the store's thread."""
    awaited: list[float] = []
    worked: list[float] = []
    thread_run = SqliteStore._run

    async def timed(self: SqliteStore, work: Callable[[sqlite3.Connection], T]) -> T:
        def timed_work(connection: sqlite3.Connection) -> T:
            began = time.perf_counter()
            try:
                return work(connection)
            finally:
                worked.append(time.perf_counter() - began)

        began = time.perf_counter()
        try:
            return await thread_run(self, timed_work)
        finally:
            awaited.append(time.perf_counter() - began)

    SqliteStore._run = timed  # type: ignore[method-assign, assignment]
    try:
        for _ in range(requests):
            await page.through_schema()
    finally:
        SqliteStore._run = thread_run  # type: ignore[method-assign]
    return (
        len(awaited) / requests,
        sum(awaited) * 1000 / requests,
        sum(worked) * 1000 / requests,
    )


@dataclass(frozen=True)
class Measured:
    """Per kind, its median ms in each round, and the CPU ms of its requests in each round
    (the process's: the store's thread too)."""

    rounds: dict[str, list[float]]
    cpu_rounds: dict[str, list[float]]

    def ms(self, kind: str) -> float:
        return statistics.median(self.rounds[kind])

    def cpu_ms(self, kind: str) -> float:
        """CPU ms per request: what one recomputation of the page costs the machine."""
        return statistics.median(self.cpu_rounds[kind])

    def line(self) -> str:
        """The figures under HEADINGS."""
        return (
            f"{self.ms('app'):>9.2f}{self.ms('schema'):>11.2f}{self.ms('floor'):>10.2f}"
            f"{self.ratio('app'):>11.2f}{self.ratio('schema'):>14.2f}"
            f"{self.cpu_ms('app'):>12.2f}{self.cpu_ms('schema'):>15.2f}"
        )

    def ratio(self, kind: str, to: str = "floor") -> float:
        """The median of the rounds' ratios: each round's two kinds ran within moments of each
        other, so a machine loaded by something else weighs on both alike."""
        pairs = zip(self.rounds[kind], self.rounds[to], strict=True)
        return statistics.median(mine / theirs for mine, theirs in pairs)


HEADINGS = (
    f"{'app ms':>9}{'schema ms':>11}{'floor ms':>10}{'app/floor':>11}{'schema/floor':>14}"
    f"{'app CPU ms':>12}{'schema CPU ms':>15}"
)


async def measure(
    page: Page, rounds: int, per_round: int, kinds: tuple[str, ...] = KINDS
) -> Measured:
    """ms per request of each kind, over interleaved rounds (the order turning)."""
    timings: dict[str, list[float]] = {kind: [] for kind in kinds}
    cpu: dict[str, list[float]] = {kind: [] for kind in kinds}
    for round_ in range(rounds):
        turn = round_ % len(kinds)
        order = kinds[turn:] + kinds[:turn]
        for kind in order:
            run = page.runner(kind)
            times = []
            cpu_began = time.process_time()
            for _ in range(per_round):
                began = time.perf_counter()
                await run()
                times.append((time.perf_counter() - began) * 1000)
            cpu[kind].append((time.process_time() - cpu_began) * 1000 / per_round)
            timings[kind].append(statistics.median(times))
    return Measured(timings, cpu)


async def first_views(page: Page, slugs: list[str]) -> float:
    """Median ms of (a) on each of `slugs` once: pages no earlier request has shown."""
    times = []
    for slug in slugs:
        began = time.perf_counter()
        await page.through_app(slug)
        times.append((time.perf_counter() - began) * 1000)
    return statistics.median(times)


async def profile(page: Page, kind: str, requests: int) -> None:
    run = page.runner(kind)
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(requests):
        await run()
    profiler.disable()
    stats = pstats.Stats(profiler, stream=sys.stdout)
    stats.sort_stats("tottime").print_stats(30)
    stats.sort_stats("cumulative").print_stats(40)


async def open_store(size: int, scratch: Path) -> tuple[Store, Path, str]:
    data_dir = scratch / f"data-{size}"
    if size == 0:
        store = connect(None, "almanac", data_dir)
        await prepare(store)
        await seed(store)
        return store, data_dir, BUNDLED_SLUG
    file = scratch / f"synthetic-{size}.json"
    file.write_text(json.dumps(synthetic_almanac(size)))
    print(f"importing {size} synthetic benchmarks ...", file=sys.stderr, flush=True)
    timed_import(file, data_dir)
    store = connect(None, "almanac", data_dir)
    await prepare(store)
    return store, data_dir, SYNTHETIC_SLUG


async def worker(size: int, per_round: int) -> None:
    """One side of `--against`: a round of every kind per line read, its figures as JSON."""
    with tempfile.TemporaryDirectory(prefix="almanac-cold-page-") as scratch:
        store, data_dir, slug = await open_store(size, Path(scratch))
        page = Page(store, data_dir, slug)
        try:
            await page.start()
            await measure(page, 2, per_round)
            print("ready", flush=True)
            for _ in sys.stdin:
                found = await measure(page, 1, per_round)
                print(json.dumps([found.rounds, found.cpu_rounds]), flush=True)
        finally:
            await page.close()
            await store.close()


class Side:
    """A `--worker` process running the code of one tree."""

    def __init__(self, name: str, tree: Path) -> None:
        self.name, self.tree = name, tree
        self.found = Measured({k: [] for k in KINDS}, {k: [] for k in KINDS})

    async def start(self, size: int, per_round: int) -> None:
        command = ["--worker", "--sizes", str(size), "--per-round", str(per_round)]
        self.process = await asyncio.create_subprocess_exec(
            sys.executable,
            str(SCRIPT),
            *command,
            cwd=self.tree,
            env={**os.environ, "PYTHONPATH": str(self.tree)},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert await self.line() == "ready", f"{self.name} did not start"

    async def line(self) -> str:
        assert self.process.stdout is not None
        return (await self.process.stdout.readline()).decode().strip()

    async def round(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(b"run\n")
        rounds, cpu = json.loads(await self.line())
        for kind in KINDS:
            self.found.rounds[kind] += rounds[kind]
            self.found.cpu_rounds[kind] += cpu[kind]

    async def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        await self.process.wait()


def unpacked(revision: str, into: Path) -> Path:
    """The files of `revision` of this repository, in `into`."""
    tar = subprocess.run(
        ["git", "-C", str(ROOT), "archive", revision], check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(tar)) as files:
        files.extractall(into, filter="data")
    return into


async def against(revision: str, sizes: list[int], rounds: int, per_round: int) -> None:
    """This tree's cold page beside `revision`'s, a round of each in turn."""
    with tempfile.TemporaryDirectory(prefix="almanac-cold-page-against-") as scratch:
        before = unpacked(revision, Path(scratch))
        print(f"{'':26}{HEADINGS}")
        for size in sizes:
            sides = [Side(revision[:12], before), Side("this tree", ROOT)]
            for side in sides:
                await side.start(size, per_round)
            for round_ in range(rounds):
                for side in sides if round_ % 2 else sides[::-1]:
                    await side.round()
            for side in sides:
                await side.stop()
                found = side.found
                name = f"{'bundled' if size == 0 else f'synthetic {size}'}, {side.name}"
                print(f"{name:26}{found.line()}", flush=True)
            old, new = (side.found.cpu_rounds for side in sides)
            for kind in ("app", "schema"):
                pairs = zip(new[kind], old[kind], strict=True)
                ratio = statistics.median(mine / theirs for mine, theirs in pairs)
                print(f"  {kind} CPU, this tree / {revision[:12]}: {ratio:.2f}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--per-round", type=int, default=5)
    parser.add_argument("--sizes", type=int, nargs="+", default=[0, 1000])
    parser.add_argument("--first-view", action="store_true")
    parser.add_argument("--profile", choices=[*KINDS, INLINE])
    parser.add_argument(
        "--store-inline",
        action="store_true",
        help="also (a) with the store's reads run inline on the event loop (measured only)",
    )
    parser.add_argument("--against", metavar="REV", help="beside git revision REV's code")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return await worker(args.sizes[0], args.per_round)
    if args.against:
        return await against(args.against, args.sizes, args.rounds, args.per_round)
    with tempfile.TemporaryDirectory(prefix="almanac-cold-page-") as scratch:
        print(f"{'':18}{HEADINGS}")
        for size in args.sizes:
            store, data_dir, slug = await open_store(size, Path(scratch))
            page = Page(store, data_dir, slug)
            try:
                await page.start()
                await measure(page, 2, args.per_round)  # warm-up: imports, first uses
                if args.profile:
                    await profile(page, args.profile, args.rounds * args.per_round)
                    continue
                kinds = (*KINDS, INLINE) if args.store_inline else KINDS
                found = await measure(page, args.rounds, args.per_round, kinds)
                name = "bundled" if size == 0 else f"synthetic {size}"
                print(f"{name:18}{found.line()}", flush=True)
                if args.store_inline and isinstance(store, SqliteStore):
                    print(
                        f"{'  store inline':18}{found.ms(INLINE):>9.2f}{'':21}"
                        f"{found.ratio(INLINE):>11.2f}   vs app: {found.ratio(INLINE, 'app'):.2f}"
                    )
                    calls, awaited, worked = await store_calls(page, args.rounds * 2)
                    print(
                        f"  store calls per page {calls:.0f}: awaited {awaited:.2f} ms for "
                        f"{worked:.2f} ms of work in the store's thread; one empty trip "
                        f"{await store_trip(store):.3f} ms"
                    )
                if args.first_view and size:
                    slugs = [f"synthetic-benchmark-{i}" for i in range(2, BIG_CATEGORY_SIZE)]
                    print(f"{'  first views':18}{await first_views(page, slugs):>9.2f}")
            finally:
                await page.close()
                await store.close()
    print(
        "\nms: median per request (of each round's median). Ratios: the median of each "
        "round's. app: through HTTP (ASGI); schema: schema.execute, fresh context; floor: "
        "graphql-core's default resolvers over the answer as plain dicts. CPU ms: the "
        "process's CPU time per request (the store's thread too; the median of each round's "
        "mean): what one recomputation of a page costs. Bar (issue 19): app/floor <= 2."
    )


if __name__ == "__main__":
    asyncio.run(main())
