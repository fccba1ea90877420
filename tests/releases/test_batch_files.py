"""A large almanac's records and leaderboards made by a process of their own
(releases/batch_files.py), on both stores: the same bytes as the pass makes (the release's id
hashes every file), and a process that ends early fails the release whole, naming its exit code,
and stages nothing."""

import pytest

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
