"""Releases' tests: their files in GridFS on mongomock too (`gridfs_on_mongomock`)."""

import pytest


@pytest.fixture(autouse=True)
def gridfs(gridfs_on_mongomock: None) -> None:
    """Every test here stages and reads files."""
