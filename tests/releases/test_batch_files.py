"""A large almanac's records and leaderboards made by a process of their own
(releases/batch_files.py), on both stores: the same bytes as the pass makes (the release's id
hashes every file), and a process that ends early fails the release whole, naming its exit code,
and stages nothing."""

from datetime import UTC, datetime

import pytest

from editing import Editor, ReadFields
from releases import StoredRelease, make_release, stored_releases
from releases import batch_files as made_by
from schema import encode_change_cursor
from schema.releases import leaderboard_reader
from store import Store

BUNDLED_BENCHMARKS = 11
IN_THE_PASS = 10**9
"""More benchmarks than any test almanac holds: the leaderboards are made in the pass."""


async def release(store: Store, process_from: int) -> tuple[StoredRelease, bool]:
    return await make_release(
        store, "Boards", leaderboard_reader(store), encode_change_cursor, process_from=process_from
    )


async def test_the_process_makes_the_passs_bytes(store: Store) -> None:
    # A benchmark with two reads: its records' date is its last read's, which the process is
    # handed (not the rest of its history).
    read = ReadFields.model_validate(
        {
            "read_on": "2026-11-20",
            "entries": [{"model_name": "Qwen-14B", "score": 99.5}],
            "allow_removals": True,
        }
    )
    editor = Editor(store, "editor", clock=lambda: datetime(2026, 12, 2, 9, 0, tzinfo=UTC))
    await editor.record_read("code-interpreter-benchmark-general", read, None)
    by_process, made = await release(store, process_from=0)
    assert made
    assert by_process.release.counts.benchmarks == BUNDLED_BENCHMARKS
    # The same data made in the pass: its files hash the same, so it is the same release.
    in_the_pass, made_again = await release(store, process_from=IN_THE_PASS)
    assert not made_again
    assert in_the_pass.release.id == by_process.release.id


async def test_a_process_that_ends_early_fails_the_release_whole(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(made_by, "CHILD", "raise SystemExit(3)")
    with pytest.raises(RuntimeError, match=r"ended early \(exit code 3\)"):
        await release(store, process_from=BUNDLED_BENCHMARKS)
    assert await stored_releases(store) == []
    # An almanac smaller than `process_from` never starts the process.
    stored, made = await release(store, process_from=BUNDLED_BENCHMARKS + 1)
    assert made
    assert [listed.release.id for listed in await stored_releases(store)] == [stored.release.id]
