"""The embedded store's admin key: logged once, when it is made; later starts name only the file
that keeps it, and `almanac admin-key` prints it on request. The file is its owner's only,
whatever mode it had before."""

import logging
import stat
from pathlib import Path

import pytest

from server.api_keys import ADMIN_KEY_FILE
from tests.server.cli.test_cli_refusals import almanac
from tests.store.sqlite.test_connection import serving

UNKNOWN_KEY = "alm_000000000000_" + "0" * 64


def messages(caplog: pytest.LogCaptureFixture) -> list[str]:
    lines = [record.getMessage() for record in caplog.records if record.name == "almanac"]
    caplog.clear()
    return lines


@pytest.fixture
def stale_key(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The embedded store's key file, holding a key unknown to it, readable by all."""
    monkeypatch.delenv("ALMANAC_MONGODB_URI", raising=False)
    data_dir.mkdir(parents=True)
    kept = data_dir / ADMIN_KEY_FILE
    kept.write_text(UNKNOWN_KEY + "\n", encoding="utf-8")
    kept.chmod(0o644)
    return kept


async def test_the_key_is_shown_once_and_kept_for_its_owner_only(
    stale_key: Path, caplog: pytest.LogCaptureFixture
) -> None:
    kept = stale_key
    with caplog.at_level(logging.INFO, logger="almanac"):
        async with serving():
            pass
        key = kept.read_text(encoding="utf-8").strip()
        assert key != UNKNOWN_KEY  # replaced: it worked nowhere
        assert stat.S_IMODE(kept.stat().st_mode) == 0o600
        first = [line for line in messages(caplog) if "Admin API key" in line]
        assert first == [
            f"Admin API key made, kept in {kept} (`almanac admin-key` shows it): {key}"
        ]

        async with serving():
            pass
        later = messages(caplog)
        assert f"Admin API key kept in {kept} (`almanac admin-key` shows it)" in later
        assert not any(key in line for line in later)
        assert kept.read_text(encoding="utf-8").strip() == key

    shown = almanac("admin-key")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == key + "\n"


def test_admin_key_says_when_there_is_none(data_dir: Path) -> None:
    shown = almanac("admin-key")
    assert shown.returncode == 1
    assert shown.stderr == (
        f"Error: No admin key is kept in {data_dir / ADMIN_KEY_FILE}: `almanac serve` makes one "
        "at its first start.\n"
    )
