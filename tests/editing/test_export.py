"""The export (editing.export): everything stored, in the import format, lossless: exported from
one store and imported into another, it exports the same (the migration path)."""

from pathlib import Path

import pytest

from editing.export import export_dataset
from editing.importer import import_dataset
from store import Store
from tests.conftest import STORES, empty_store
from tests.editing.test_importer import STAMP


@pytest.mark.parametrize("into", STORES)
async def test_export_wipe_import_export_gives_the_same_content(
    store: Store, into: str, tmp_path: Path
) -> None:
    """Exporting from one store and importing into another is the migration path."""
    exported = await export_dataset(store)
    fresh = await empty_store(into, tmp_path / "fresh")
    summary = await import_dataset(fresh, exported, STAMP)
    assert summary.count("rejected") == 0, summary.rejected
    assert await export_dataset(fresh) == exported
    await fresh.close()
    assert len(exported["benchmarks"]) == 11
    assert exported["site"] == {"launch_posts_read": 522, "labs_read": 52}
    assert len(exported["provenance"]) >= 5
