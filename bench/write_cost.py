"""What a write costs, in one process on the embedded store: the median latency of a mutation
(`updateBenchmark` of a note, and `recordLeaderboardRead`), through the app's ASGI interface.

Run it in two checkouts, interleaved, to compare them (e.g. before and after the change log):

    .venv/bin/python bench/write_cost.py [--writes 200]
"""

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

UPDATE = """mutation($note: String!) {
  updateBenchmark(slug: "code-interpreter-benchmark-general", input: {note: $note}) {
    revision } }"""
RECORD = """mutation($day: Date!, $score: Float!) {
  recordLeaderboardRead(benchmark: "code-interpreter-benchmark-math", input: {readOn: $day,
    allowRemovals: true, entries: [{modelName: "Qwen-14B-Chat", score: $score, setting: "v1",
    publishedOn: "2026-11-01"}]}) { recorded } }"""


async def main(writes: int) -> None:
    os.environ["ALMANAC_DATA_DIR"] = tempfile.mkdtemp(prefix="almanac-writes-")
    os.environ["ALMANAC_LOG_LEVEL"] = "warning"
    import httpx

    from server.api_keys import create_key
    from server.app import create_app
    from server.lifespan import open_store
    from server.settings import Settings

    settings = Settings()
    store = await open_store(settings)
    key = await create_key(store, "bench", "admin")
    app = create_app(settings, store)
    transport = httpx.ASGITransport(app=app)
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(transport=transport, base_url="http://x", headers=headers) as c:
        for name, query, variables in (
            ("updateBenchmark", UPDATE, lambda i: {"note": f"Write {i}."}),
            (
                "recordLeaderboardRead",
                RECORD,
                lambda i: {"day": "2026-11-20", "score": 50 + (i % 80) / 2},
            ),
        ):
            took = []
            for i in range(writes):
                began = time.perf_counter()
                body = await c.post("/graphql", json={"query": query, "variables": variables(i)})
                took.append(time.perf_counter() - began)
                assert "errors" not in body.json(), body.text
            print(f"{name:24} median {statistics.median(took) * 1000:6.2f} ms over {writes}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=200)
    asyncio.run(main(parser.parse_args().writes))
