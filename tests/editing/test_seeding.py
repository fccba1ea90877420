"""Seeding by state: a new data directory is seeded once, by whichever command opens it first,
and a seed cut short (a full disk, a crash) is finished at the next open."""

import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from editing.importer import ensure_seeded, seed
from server.app import create_app
from server.settings import Settings
from store import Store
from store.queries import Collection, SeedState
from tests.conftest import STORES, empty_store, snapshot

WRITES = (
    "replace",
    "insert",
    "insert_many",
    "replace_at_revision",
    "write_batch",
    "set_tracked_ranks",
)


class DiskFull(OSError):
    pass


class CutStore:
    """The real store, whose writes fail (as on a full disk) after the first `writes` of them."""

    def __init__(self, store: Store, writes: int) -> None:
        self._store = store
        self._left = writes

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._store, name)
        if name not in WRITES:
            return method

        async def write(*args: Any, **kwargs: Any) -> Any:
            if self._left == 0:
                raise DiskFull(28, "No space left on device")
            self._left -= 1
            return await method(*args, **kwargs)

        return write


def timeless(dump: str) -> str:
    """A snapshot without the times writes were stamped at (two seeds run at two moments)."""
    # The snapshot holds each document as JSON text in JSON: its quotes are escaped.
    return re.sub(r'(\\?"\w+_at\\?": \\?")[^"\\]*', r"\1<when>", dump)


async def seeded_snapshot(kind: str, folder: Path) -> str:
    clean = await empty_store(kind, folder)
    await seed(clean)
    taken = timeless(await snapshot(clean))
    await clean.close()
    return taken


@pytest.mark.parametrize("kind", STORES)
@pytest.mark.parametrize("writes", [0, 1, 4, 12])
async def test_a_seed_cut_short_is_finished_at_the_next_open(
    kind: str, writes: int, tmp_path: Path
) -> None:
    opened = await empty_store(kind, tmp_path / "cut")
    with pytest.raises(DiskFull):
        await seed(CutStore(opened, writes))
    assert await opened.seed_state() in (SeedState.NEW, SeedState.STARTED)

    finished = await ensure_seeded(opened)

    assert finished is not None
    assert finished.count("rejected") == 0, finished.rejected
    assert await opened.seed_state() is SeedState.FINISHED
    assert timeless(await snapshot(opened)) == await seeded_snapshot(kind, tmp_path / "clean")
    assert await ensure_seeded(opened) is None  # and never again
    await opened.close()


async def test_the_app_finishes_a_seed_cut_short_in_its_data_directory(data_dir: Path) -> None:
    """Through the real path: the server's start-up opens the directory and finishes the seed."""
    opened = await empty_store("sqlite", data_dir)
    with pytest.raises(DiskFull):
        await seed(CutStore(opened, 6))
    await opened.close()

    app = create_app(Settings())
    transport = httpx.ASGITransport(app=app)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://almanac.test") as client,
    ):
        query = "{ categories { benchmarkCount } models(first: 100) { totalCount } }"
        response = await client.post("/graphql", json={"query": query})
    assert response.json()["data"] == {
        "categories": [{"benchmarkCount": 11}],
        "models": {"totalCount": 8},
    }


@pytest.mark.parametrize("kind", STORES)
async def test_a_store_with_data_and_no_marker_is_left_alone(kind: str, tmp_path: Path) -> None:
    """Data stored before seed markers existed is never seeded over."""
    opened = await empty_store(kind, tmp_path)
    await opened.insert(Collection.LABS, {"slug": "acme", "name": "Acme"})
    before = await snapshot(opened)
    assert await ensure_seeded(opened) is None
    assert await snapshot(opened) == before
    await opened.close()


async def test_the_finished_marker_lands_with_the_seeds_last_write(tmp_path: Path) -> None:
    """On the embedded store, in one transaction: a seed cut at its last write leaves no
    marker saying it finished."""
    opened = await empty_store("sqlite", tmp_path / "whole")
    await seed(opened)
    *_, last, marker = await opened.changes_after(0, 10_000)
    assert (last.slug, marker.slug) == ("provenance", "seed")
    assert last.at == marker.at  # logged by one transaction
    await opened.close()

    counting = await empty_store("sqlite", tmp_path / "count")
    counter = CutStore(counting, 10**6)
    await seed(counter)
    writes = 10**6 - counter._left  # how many writes a whole seed makes
    await counting.close()

    cut = await empty_store("sqlite", tmp_path / "cut")
    with pytest.raises(DiskFull):
        await seed(CutStore(cut, writes - 1))  # every write but the last
    assert await cut.seed_state() is SeedState.STARTED
    await cut.close()
