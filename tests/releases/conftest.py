"""Releases' tests: on mongomock, motor's own GridFS code runs over mongomock's collections
(mongomock_motor's GridFS integration, which patches pymongo's type checks for them); with
ALMANAC_TEST_MONGODB_URI, over a real MongoDB."""

from collections.abc import Iterator

import pytest
from mongomock_motor import enabled_gridfs_integration


@pytest.fixture(autouse=True)
def gridfs_on_mongomock() -> Iterator[None]:
    with enabled_gridfs_integration():
        yield
