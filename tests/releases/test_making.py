"""A release made, read back and deleted through the library, on both stores: its files hash
to its manifest, the same data gives the same id anywhere, later writes change nothing of it,
and a deleted one keeps its tombstone."""

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from editing import Editor, ReadFields, seed, write_export
from interchange import write_eee
from releases import (
    EEE_FILE,
    MANIFEST_FILE,
    NDJSON_FILE,
    ReleaseRefused,
    StoredRelease,
    delete_release,
    file_chunks,
    file_of,
    make_release,
    released_benchmark,
    stored_release,
    stored_releases,
)
from schema import create_release, encode_change_cursor
from schema.releases import leaderboard_reader
from store import ChangeKind, Store, connect
from tests.conftest import empty_store

SLUG = "code-interpreter-benchmark-general"
CLOCK = datetime(2026, 12, 2, 9, 0, tzinfo=UTC)


async def release(store: Store, title: str = "First") -> tuple[StoredRelease, bool]:
    return await make_release(
        store, title, leaderboard_reader(store), encode_change_cursor, now=CLOCK
    )


async def read_file(store: Store, stored: StoredRelease, name: str) -> bytes:
    return b"".join([chunk async for chunk in await file_chunks(store, stored, name)])


async def test_files_hash_to_the_manifest(store: Store) -> None:
    stored, made = await release(store)
    assert made
    files = stored.release.files
    assert [file.name for file in files[:1]] == [NDJSON_FILE]
    benchmark_files = sorted(file.name for file in files if file.name.startswith("benchmarks/"))
    assert len(benchmark_files) == stored.release.counts.benchmarks == 11
    for file in (*files, stored.manifest):
        data = await read_file(store, stored, file.name)
        assert (len(data), hashlib.sha256(data).hexdigest()) == (file.size, file.sha256)
    manifest = await read_file(store, stored, MANIFEST_FILE)
    listed = json.loads(manifest)
    assert listed["files"] == sorted((vars(file) for file in files), key=lambda file: file["name"])
    assert listed["counts"] == vars(stored.release.counts)
    # The id: the data's date and the manifest's own SHA-256.
    assert stored.release.id == f"{listed['date']}-{hashlib.sha256(manifest).hexdigest()[:12]}"
    assert listed["date"] == "2026-11-12"  # the bundled reads' newest date, not today's


async def test_the_ndjson_is_the_export_byte_for_byte(store: Store, tmp_path: Path) -> None:
    stored, _ = await release(store)
    exported = tmp_path / "almanac.ndjson"
    with exported.open("w", encoding="utf-8") as out:
        await write_export(store, out, ndjson=True)
    assert await read_file(store, stored, NDJSON_FILE) == exported.read_bytes()


async def test_the_every_eval_ever_file_is_the_export_byte_for_byte(
    store: Store, tmp_path: Path
) -> None:
    stored, _ = await release(store)
    assert EEE_FILE in [file.name for file in stored.release.files]
    exported = tmp_path / "almanac.eee.jsonl"
    with exported.open("w", encoding="utf-8") as out:
        written = await write_eee(store, out)
    released = await read_file(store, stored, EEE_FILE)
    assert released == exported.read_bytes()
    assert len(released.splitlines()) == written > 0


async def test_a_leaderboard_csv_is_the_download(store: Store) -> None:
    stored, _ = await release(store)
    csv = (await read_file(store, stored, f"benchmarks/{SLUG}.csv")).decode()
    header, first = csv.splitlines()[:2]
    assert header.startswith("rank,model,listed_as,tracked,score")
    assert first.startswith("1,GPT-4 (snapshot unspecified),")
    assert ",82.8," in first


async def test_the_same_data_gives_the_same_id_in_two_data_directories(
    store: Store, tmp_path: Path
) -> None:
    other = connect(None, "almanac", tmp_path / "elsewhere")
    try:
        await seed(other)
        ours, _ = await release(store, "Ours")
        theirs, _ = await create_release(other, "Theirs")
    finally:
        await other.close()
    assert theirs.release.id == ours.release.id
    assert theirs.release.files == ours.release.files


async def test_releasing_the_same_data_again_gives_the_release_made(store: Store) -> None:
    first, _ = await release(store, "First")
    again, made = await release(store, "Second")
    assert not made
    assert again == first  # its title and date stay
    assert [stored.release.id for stored in await stored_releases(store)] == [first.release.id]


async def test_later_writes_change_nothing_of_a_release(store: Store) -> None:
    first, _ = await release(store)
    before = {f.name: await read_file(store, first, f.name) for f in first.release.files}
    read = ReadFields.model_validate(
        {
            "read_on": "2026-11-20",
            "entries": [{"model_name": "Qwen-14B", "score": 99.5}],
            "allow_removals": True,
        }
    )
    editor = Editor(store, "editor", clock=lambda: CLOCK)
    await editor.record_read(SLUG, read, None)
    second, made = await release(store, "After the read")
    assert made
    assert second.release.id != first.release.id
    assert second.release.id.startswith("2026-12-02-")  # the read recorded on that day
    held = await stored_release(store, first.release.id)
    assert held == first
    for name, data in before.items():
        assert await read_file(store, first, name) == data
    top = (await read_file(store, second, f"benchmarks/{SLUG}.csv")).decode().splitlines()[1]
    assert top.startswith("1,Qwen-14B,")
    old = await released_benchmark(store, first, SLUG)
    new = await released_benchmark(store, second, SLUG)
    assert old is not None
    assert new is not None
    assert len(new["reads"]) == len(old["reads"]) + 1


async def test_a_release_is_announced_as_a_change_of_its_own_kind(store: Store) -> None:
    stored, _ = await release(store)
    await release(store, "Again")  # the same data: announced once
    changes = await store.changes_after(stored.sequence, 100)
    assert [(c.kind, c.collection, c.slug) for c in changes] == [
        (ChangeKind.RELEASE_PUBLISHED, "releases", stored.release.id)
    ]
    assert stored.release.cursor == encode_change_cursor(stored.sequence)


async def test_a_deleted_release_keeps_its_tombstone(store: Store) -> None:
    stored, _ = await release(store)
    at = datetime(2026, 12, 3, 10, 0, tzinfo=UTC)
    buried = await delete_release(store, stored.release.id, "a wrong score", "admin", now=at)
    held = await stored_release(store, stored.release.id)
    assert held == buried
    assert held.deleted is not None
    assert (held.deleted.at, held.deleted.why, held.deleted.by) == (at, "a wrong score", "admin")
    assert file_of(held, NDJSON_FILE) is not None  # its manifest stays: what it was
    with pytest.raises(LookupError):
        await file_chunks(store, held, NDJSON_FILE)
    with pytest.raises(ReleaseRefused, match="deleted on 2026-12-03 \\(a wrong score\\)"):
        await release(store, "Again")
    with pytest.raises(ReleaseRefused, match="deleted already"):
        await delete_release(store, stored.release.id, "twice", None)
    [change] = await store.changes_after(stored.sequence + 1, 100)
    assert (change.kind, change.slug) == (ChangeKind.RELEASE_DELETED, stored.release.id)


async def test_an_almanac_without_reads_has_nothing_to_release(data_dir: Path) -> None:
    store = await empty_store("sqlite", data_dir)
    try:
        with pytest.raises(ReleaseRefused, match="no leaderboard read"):
            await release(store)
        assert await stored_releases(store) == []
        assert not list((data_dir / "releases").glob("*"))  # the staged files went
    finally:
        await store.close()


async def test_unknown_releases_and_files(store: Store) -> None:
    stored, _ = await release(store)
    assert await stored_release(store, "2026-11-12-000000000000") is None
    assert await stored_release(store, "../almanac") is None
    assert file_of(stored, "../almanac.sqlite3") is None
    assert await released_benchmark(store, stored, "no-such-benchmark") is None
