"""The catalog against the page, answer reuse off, in one process on the embedded store: a
SYNTHETIC almanac (bench/synthetic.py: no result is real), interleaved requests of the page
query (a different benchmark each time), `benchmarks(first: 100)` with each row's leader and
tracked leader, and the same catalog without leaders. Prints each median and the ratios.

Bars (issue 19): the catalog with leaders <= 1.5x the page, and <= 1.3x without leaders.
Beside them, graphql-core's floor for each document (its default resolvers over the app's
answer as plain dicts, as bench/cold_page.py measures): what executing the documents costs
with no data to find, so what their ratio can come down to.

    .venv/bin/python bench/catalog.py [--benchmarks 1000] [--rounds 40]
"""

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

WITH = """{ benchmarks(first: 100) { totalCount nodes { slug name
  leader { modelName score } trackedLeader { modelName score } } } }"""
WITHOUT = "{ benchmarks(first: 100) { totalCount nodes { slug name } } }"


async def main(benchmarks: int, rounds: int) -> None:
    from bench.scale import environment

    # Answer reuse off and a budget that refuses nothing, as bench/scale.py serves.
    data_dir = Path(tempfile.mkdtemp(prefix="almanac-catalog-"))
    try:
        os.environ |= environment(data_dir, ALMANAC_LOG_LEVEL="warning")
        await measure(benchmarks, rounds)
    finally:
        shutil.rmtree(data_dir)  # some 770 MB at 10,000


async def measure(benchmarks: int, rounds: int) -> None:
    import graphql
    import httpx

    from bench.run import CONTRACT
    from bench.synthetic import synthetic_almanac
    from editing import Stamp, import_dataset
    from server.app import create_app
    from server.lifespan import open_store
    from server.settings import Settings

    settings = Settings()
    store = await open_store(settings)
    await import_dataset(store, synthetic_almanac(benchmarks), Stamp("bench", datetime.now(UTC)))
    page = CONTRACT.read_text(encoding="utf-8")
    took: dict[str, list[float]] = {"page": [], "with leaders": [], "without leaders": []}
    answers: dict[str, Any] = {}
    transport = httpx.ASGITransport(app=create_app(settings, store))
    async with httpx.AsyncClient(transport=transport, base_url="http://almanac.bench") as client:
        for i in range(rounds):
            slug = f"synthetic-benchmark-{i * 7 % (benchmarks - 1) + 1}"
            for name, body in (
                ("page", {"query": page, "variables": {"slug": slug}}),
                ("with leaders", {"query": WITH}),
                ("without leaders", {"query": WITHOUT}),
            ):
                began = time.perf_counter()
                answer = await client.post("/graphql", json=body)
                took[name].append(time.perf_counter() - began)
                assert "errors" not in answer.json(), answer.text[:300]
                answers[name] = answer.json()["data"]
    ms = {name: statistics.median(times[5:]) * 1000 for name, times in took.items()}
    floor_schema = graphql.build_schema((ROOT / "schema.graphql").read_text(encoding="utf-8"))
    floor = {
        name: _floor_ms(floor_schema, query, answers[name], rounds)
        for name, query in (("with leaders", WITH), ("without leaders", WITHOUT))
    }
    for name, value in ms.items():
        beside = f"   floor {floor[name]:6.2f} ms" if name in floor else ""
        print(f"{name:16} {value:7.2f} ms{beside}")
    print(
        f"with leaders / page {ms['with leaders'] / ms['page']:.2f} (bar 1.5); "
        f"with / without leaders {ms['with leaders'] / ms['without leaders']:.2f} (bar 1.3; "
        f"graphql-core's floor: {floor['with leaders'] / floor['without leaders']:.2f})"
    )


def _floor_ms(schema: Any, query: str, answer: dict[str, Any], rounds: int) -> float:
    """Median ms of graphql-core executing `query` with its default resolvers over `answer`."""
    import graphql

    document = graphql.parse(query)
    times = []
    for _ in range(rounds):
        began = time.perf_counter()
        result = graphql.execute(schema, document, root_value=answer)
        times.append(time.perf_counter() - began)
        assert getattr(result, "data", None) == answer, "the floor answers differently"
    return statistics.median(times) * 1000


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmarks", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=40)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.benchmarks, arguments.rounds))
