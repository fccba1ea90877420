"""The embedded store keeps what it is given: across restarts, a killed import, and other
processes writing beside a running server."""

import asyncio
import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
from starlette.applications import Starlette

from bench.synthetic import synthetic_almanac
from editing.importer import seed
from server.api_keys import ADMIN_KEY_FILE
from server.app import create_app
from server.settings import Settings
from store.queries import Collection, Write
from store.sqlite import SqliteStore
from tests.conftest import snapshot

ROOT = Path(__file__).parents[3]
GENERAL = "code-interpreter-benchmark-general"
DESCRIPTION = f'{{ benchmark(slug: "{GENERAL}") {{ description revision }} }}'


@asynccontextmanager
async def serving() -> AsyncIterator[httpx.AsyncClient]:
    """The app on the configured data directory, started and stopped as Uvicorn would."""
    app: Starlette = create_app(Settings())
    transport = httpx.ASGITransport(app=app)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://almanac.test") as client,
    ):
        yield client


async def test_writes_keys_and_history_survive_a_restart(data_dir: Path) -> None:
    async with serving() as first:
        key = (data_dir / ADMIN_KEY_FILE).read_text().strip()
        update = """mutation { updateBenchmark(slug: "code-interpreter-benchmark-general",
                    input: {description: "Kept."}) { revision } }"""
        written = await first.post(
            "/graphql", json={"query": update}, headers={"Authorization": f"Bearer {key}"}
        )
        assert "errors" not in written.json(), written.json()
    async with serving() as second:
        body = (await second.post("/graphql", json={"query": DESCRIPTION})).json()
        assert body["data"]["benchmark"] == {"description": "Kept.", "revision": 3}
        # The same admin key still works, and the bundled dataset was not loaded again.
        assert (data_dir / ADMIN_KEY_FILE).read_text().strip() == key
        again = await second.post(
            "/graphql",
            json={"query": update.replace("Kept.", "Kept again.")},
            headers={"Authorization": f"Bearer {key}"},
        )
        assert again.json()["data"]["updateBenchmark"]["revision"] == 4


def almanac(*args: str, data_dir: Path) -> subprocess.Popen[str]:
    environment = {**os.environ, "ALMANAC_DATA_DIR": str(data_dir)}
    environment.pop("ALMANAC_MONGODB_URI", None)
    return subprocess.Popen(
        [sys.executable, "-m", "server.cli", *args],
        cwd=ROOT,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def read_counts(data_dir: Path) -> list[tuple[str, int]]:
    """Each stored benchmark with how many reads its history holds."""

    async def read() -> list[tuple[str, int]]:
        store = SqliteStore(data_dir)
        try:
            return [(doc["slug"], len(doc["history"])) for doc in await store.benchmarks()]
        finally:
            await store.close()

    return asyncio.run(read())


def mark_seeded(data_dir: Path) -> None:
    """An empty data directory that the CLI will not seed (as it would a new one)."""

    async def mark() -> None:
        store = SqliteStore(data_dir)
        try:
            await store.mark_seed(finished=True)
        finally:
            await store.close()

    asyncio.run(mark())


def stored_count(data_dir: Path) -> int:
    """How many benchmarks the data directory holds, read as another process would."""
    path = data_dir / "almanac.sqlite3"
    if not path.exists():
        return 0
    with (
        contextlib.closing(sqlite3.connect(path, timeout=10)) as connection,
        contextlib.suppress(sqlite3.OperationalError),  # not made yet
    ):
        return int(connection.execute("SELECT count(*) FROM benchmarks").fetchone()[0])
    return 0


def test_a_killed_import_leaves_every_benchmark_whole_and_runs_again(
    data_dir: Path, tmp_path: Path
) -> None:
    size = 2_000  # ten transactions of 200: killed after the first
    mark_seeded(data_dir)  # so that every benchmark stored is the import's
    dataset = synthetic_almanac(size, rows=10, reads=3)
    file = tmp_path / "synthetic.json"
    file.write_text(json.dumps(dataset))
    importing = almanac("import", str(file), data_dir=data_dir)
    deadline = time.monotonic() + 60
    while stored_count(data_dir) == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    importing.send_signal(signal.SIGKILL)
    importing.wait()
    part = read_counts(data_dir)
    assert 0 < len(part) < size, "the import was not stopped part way"
    assert all(reads == 3 for _, reads in part), "a benchmark was written in part"

    finished = almanac("import", str(file), data_dir=data_dir)
    output, _ = finished.communicate(timeout=120)
    assert finished.returncode == 0, output
    # What was written before the kill is unchanged now; the rest of the benchmarks, and the
    # provenance (written last), are created.
    created = size - len(part) + 1
    last = output.splitlines()[-1]
    assert f"{size} benchmarks, 1 site record: {created} created, 0 updated" in last, last
    whole = read_counts(data_dir)
    assert len(whole) == size
    assert all(reads == 3 for _, reads in whole)


async def test_a_cli_import_while_serving_is_seen(data_dir: Path, tmp_path: Path) -> None:
    async with serving() as client:
        before = (await client.post("/graphql", json={"query": DESCRIPTION})).json()
        assert before["data"]["benchmark"]["revision"] == 2  # answered, and kept for reuse
        csv = tmp_path / "read.csv"
        csv.write_text(f"benchmark,read_on,model_name,score\n{GENERAL},2026-11-20,Qwen-14B,70\n")
        importing = await asyncio.to_thread(
            lambda: almanac("import", "--allow-removals", str(csv), data_dir=data_dir).communicate(
                timeout=60
            )
        )
        assert "1 updated" in importing[0], importing
        # Seen at the next poll of the file's data version (every 0.5 s); the deadline is only
        # there so that a server that never sees it fails rather than hangs.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            body = (await client.post("/graphql", json={"query": DESCRIPTION})).json()
            if body["data"]["benchmark"]["revision"] == 3:
                break
            await asyncio.sleep(0.05)
        assert body["data"]["benchmark"]["revision"] == 3


async def test_of_two_connections_writing_at_one_revision_exactly_one_wins(
    data_dir: Path,
) -> None:
    async with serving():
        pass  # seeds the data directory
    server, cli = SqliteStore(data_dir), SqliteStore(data_dir)
    try:
        [doc] = await server.benchmarks_by_slugs([GENERAL])
        changed: list[dict[str, Any]] = [
            {**doc, "description": f"By {who}", "revision": doc["revision"] + 1}
            for who in ("server", "cli")
        ]
        outcomes = await asyncio.gather(
            server.replace_at_revision(Collection.BENCHMARKS, GENERAL, doc["revision"], changed[0]),
            cli.replace_at_revision(Collection.BENCHMARKS, GENERAL, doc["revision"], changed[1]),
        )
        assert sorted(outcomes) == [False, True]
        [now] = await cli.benchmarks_by_slugs([GENERAL])
        assert now["description"] == ("By server" if outcomes[0] else "By cli")
        assert now["revision"] == doc["revision"] + 1
    finally:
        await server.close()
        await cli.close()


async def test_a_refused_write_in_a_batch_leaves_nothing_of_itself(data_dir: Path) -> None:
    """Each write of a batch is whole or not at all: a model whose alias another model holds is
    refused after its own row and key went in (on SQLite), and takes them back out; a
    replacement refused so gives back the document it replaced; the writes around them stand.
    (SQLite's own savepoints: mongomock does not enforce a unique index on an array's items,
    and on MongoDB each write is one document, atomic.)"""
    store = SqliteStore(data_dir)
    await seed(store)
    [qwen] = await store.models_by_slugs(["qwen-14b"])
    grabbing = ["impostor", *qwen["keys"]]
    taken = {**qwen, "slug": "impostor", "name": "Impostor", "revision": 1, "keys": grabbing}
    fresh = {**qwen, "slug": "newcomer", "name": "Newcomer", "aliases": [], "keys": ["newcomer"]}
    fresh["revision"] = 1
    outcomes = await store.write_batch(
        [Write(Collection.MODELS, taken), Write(Collection.MODELS, fresh)]
    )
    assert outcomes == [False, True]
    assert await store.models_by_slugs(["impostor"]) == []
    assert await store.models_by_keys(["impostor"]) == []
    before = await snapshot(store)

    renamed = {**fresh, "name": "Renamed", "keys": ["renamed", *qwen["keys"]], "revision": 2}
    assert await store.write_batch([Write(Collection.MODELS, renamed, revision=1)]) == [False]
    assert await snapshot(store) == before
    [kept] = await store.models_by_keys(["newcomer"])
    assert kept["name"] == "Newcomer"
    await store.close()
