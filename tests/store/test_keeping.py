"""A backup of the embedded store is a whole copy made while it is open; MongoDB's is mongodump's."""

from pathlib import Path

import pytest

from store import Store
from store.client import connect
from store.queries import NoOnlineBackup


async def test_a_backup_holds_the_whole_store(store: Store, tmp_path: Path) -> None:
    target = tmp_path / "copy" / "almanac.sqlite3"
    target.parent.mkdir()
    if not store.embedded:
        with pytest.raises(NoOnlineBackup, match="mongodump"):
            await store.backup(target)
        assert not target.exists()
        return
    await store.backup(target)
    assert list(target.parent.iterdir()) == [target]
    copy = connect(None, "almanac", target.parent)
    try:
        assert await copy.dump() == await store.dump()
    finally:
        await copy.close()
