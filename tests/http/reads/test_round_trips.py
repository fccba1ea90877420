"""A page costs a fixed number of store round trips, however many rows or siblings it shows."""

from collections import Counter

import pytest

from server.settings import Settings
from tests.conftest import GraphQLClient
from tests.http.reads.test_contract import CONTRACT, GENERAL


@pytest.fixture
def settings() -> Settings:
    return Settings(response_cache_bytes=0)  # Count the work, not reused answers.


async def test_contract_request_makes_at_most_three_round_trips(
    graphql: GraphQLClient, calls: Counter[str]
) -> None:
    page = await graphql.data(CONTRACT.read_text(encoding="utf-8"), slug=GENERAL)
    assert page["benchmark"]["siblings"]["totalCount"] == 6
    assert sum(calls.values()) <= 3, calls


LISTING = """
query Listing($first: Int!) {
  benchmarks(first: $first) {
    nodes {
      name
      trackedLeader { modelName model { name } }
      parent { name trackedLeader { modelName } }
      tracks { name }
      category { benchmarkCount }
      siblings(first: 3) { nodes { name trackedLeader { modelName } } }
    }
  }
}
"""


async def test_a_longer_listing_costs_no_more_round_trips(
    graphql: GraphQLClient, calls: Counter[str]
) -> None:
    # One call per level of the listing: the list, its documents, the neighbourhoods, and the
    # tracked models of what each level brought (the longer list has met them all already).
    await graphql.data(LISTING, first=2)
    short = sum(calls.values())
    calls.clear()
    data = await graphql.data(LISTING, first=11)
    assert len(data["benchmarks"]["nodes"]) == 11
    assert sum(calls.values()) <= short <= 5, calls
