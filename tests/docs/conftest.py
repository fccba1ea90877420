"""A live server for the guides' examples, as a reader of the guides would run them."""

from collections.abc import Iterator

import pytest

from tests.conftest import live_almanac


@pytest.fixture(scope="package")
def live_server() -> Iterator[dict[str, str]]:
    """`almanac serve` on the embedded store, on a free port, with the key it makes."""
    with live_almanac() as (url, key):
        yield {"BENCHMARK_ALMANAC_URL": url, "BENCHMARK_ALMANAC_KEY": key}
