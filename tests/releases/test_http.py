"""A release's files over HTTP, through the real app: streamed, hashed as the manifest says,
with strong ETags and immutable caching, priced as the downloads they stand for; 404 for what
is not there, 410 Gone with when and why for a deleted release. Both stores."""

import asyncio
import hashlib
import json
from datetime import UTC, datetime

import httpx
import pytest
from starlette.applications import Starlette
from starlette.types import Message

from releases import StoredRelease, delete_release, make_release
from schema import encode_change_cursor
from schema.releases import leaderboard_reader
from store import Store

SLUG = "code-interpreter-benchmark-general"
IMMUTABLE = "public, max-age=31536000, immutable"


@pytest.fixture
async def released(store: Store) -> StoredRelease:
    stored, _ = await make_release(store, "First", leaderboard_reader(store), encode_change_cursor)
    return stored


async def test_every_file_is_served_as_its_manifest_says(
    client: httpx.AsyncClient, released: StoredRelease
) -> None:
    base = f"/releases/{released.release.id}"
    manifest = await client.get(f"{base}/manifest.json")
    assert manifest.status_code == 200
    listed = json.loads(manifest.content)
    assert released.release.id.endswith(hashlib.sha256(manifest.content).hexdigest()[:12])
    assert len(listed["files"]) == len(released.release.files) == 13
    for file in listed["files"]:
        answer = await client.get(f"{base}/{file['name']}")
        assert answer.status_code == 200, file["name"]
        assert hashlib.sha256(answer.content).hexdigest() == file["sha256"]
        assert len(answer.content) == file["size"] == int(answer.headers["content-length"])
        assert answer.headers["etag"] == f'"{file["sha256"]}"'
        assert answer.headers["cache-control"] == IMMUTABLE
        assert answer.headers["content-type"].startswith(file["media_type"])


async def test_a_client_holding_a_file_gets_a_304(
    client: httpx.AsyncClient, released: StoredRelease
) -> None:
    url = f"/releases/{released.release.id}/benchmarks/{SLUG}.csv"
    first = await client.get(url)
    again = await client.get(url, headers={"If-None-Match": first.headers["etag"]})
    assert again.status_code == 304
    assert again.headers["etag"] == first.headers["etag"]
    assert again.headers["almanac-cost"] == "1"  # charged the minimum, and says so


async def test_each_leaderboard_is_its_download_byte_for_byte_and_priced_so(
    client: httpx.AsyncClient, released: StoredRelease
) -> None:
    """The release computes its leaderboards by the rules the schema's types call, without
    running the query: each CSV is still the query's, as `/benchmarks/{slug}.csv` runs it."""
    base = f"/releases/{released.release.id}"
    csvs = [f.name for f in released.release.files if f.name.startswith("benchmarks/")]
    assert len(csvs) == 11
    for name in csvs:
        csv = await client.get(f"{base}/{name}")
        download = await client.get(f"/{name}")
        assert csv.content == download.content, name
        assert csv.headers["almanac-cost"] == download.headers["almanac-cost"]


async def test_files_are_priced_as_the_downloads_they_stand_for(
    client: httpx.AsyncClient, released: StoredRelease
) -> None:
    base = f"/releases/{released.release.id}"
    whole = await client.get(f"{base}/almanac.ndjson")
    counts = released.release.counts
    assert int(whole.headers["almanac-cost"]) == 1 + counts.benchmarks + counts.models
    assert (await client.get(f"{base}/manifest.json")).headers["almanac-cost"] == "1"


async def test_what_is_not_there_is_404(client: httpx.AsyncClient, released: StoredRelease) -> None:
    for url in (
        "/releases/2026-11-12-000000000000/almanac.ndjson",
        f"/releases/{released.release.id}/benchmarks/no-such.csv",
        f"/releases/{released.release.id}/%2E%2E/%2E%2E/almanac.sqlite3",
        "/releases/%2E%2E/almanac.sqlite3",
        f"/releases/{released.release.id}/release.json",
        "/releases/..%2F..%2Fetc/passwd",
    ):
        answer = await client.get(url)
        assert answer.status_code == 404, url
        assert answer.json()["errors"][0]["extensions"]["code"] == "NOT_FOUND"


async def test_a_deleted_release_is_gone_with_when_and_why(
    client: httpx.AsyncClient, store: Store, released: StoredRelease
) -> None:
    at = datetime(2026, 12, 3, 10, 0, tzinfo=UTC)
    await delete_release(store, released.release.id, "a score was misread", "admin", now=at)
    for name in ("almanac.ndjson", "manifest.json", f"benchmarks/{SLUG}.csv"):
        answer = await client.get(f"/releases/{released.release.id}/{name}")
        assert answer.status_code == 410
        [error] = answer.json()["errors"]
        assert error["extensions"] == {
            "code": "GONE",
            "deletedAt": "2026-12-03T10:00:00+00:00",
            "reason": "a score was misread",
        }
        assert "a score was misread" in error["message"]


async def held_download(app: Starlette, path: str) -> tuple[asyncio.Task[None], asyncio.Event]:
    """A download through the app's ASGI interface whose client stops reading after the
    response starts, until the event returned is set: then it disconnects."""
    started, gone = asyncio.Event(), asyncio.Event()
    asked = False

    async def receive() -> Message:
        nonlocal asked
        if not asked:
            asked = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            assert message["status"] == 200
            started.set()
            await gone.wait()

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"almanac.test")],
        "client": ("127.0.0.1", 50000),
        "server": ("almanac.test", 80),
    }
    task = asyncio.create_task(app(scope, receive, send))
    await asyncio.wait_for(started.wait(), timeout=60)
    return task, gone


async def test_the_whole_almanac_streams_one_at_a_time_per_client(
    app: Starlette, client: httpx.AsyncClient, released: StoredRelease
) -> None:
    """The NDJSON takes an export slot while it streams, and gives it back when it ends."""
    url = f"/releases/{released.release.id}/almanac.ndjson"
    task, gone = await held_download(app, url)
    refused = await client.get(url)
    assert refused.status_code == 429
    assert refused.json()["errors"][0]["extensions"]["code"] == "THROTTLED"
    assert (await client.get(f"/releases/{released.release.id}/manifest.json")).status_code == 200
    gone.set()
    await asyncio.wait_for(task, timeout=60)
    assert (await client.get(url)).status_code == 200
