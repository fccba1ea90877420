"""A release is announced as a change of its own kind: in the change feed (filtered by kind
too), and in the Atom feed with a link to its manifest. Both stores."""

import feedparser
import httpx

from releases import delete_release
from schema import create_release
from store import Store
from tests.conftest import GraphQLClient

FEED = """query Feed($filter: ChangeFilter) {
  changes(last: 5, filter: $filter) { nodes { kind slug subject { id } } }
}"""


async def test_a_release_and_its_deletion_are_changes_of_their_own(
    graphql: GraphQLClient, store: Store
) -> None:
    stored, _ = await create_release(store, "First")
    await delete_release(store, stored.release.id, "misread", "admin")
    nodes = (await graphql.data(FEED))["changes"]["nodes"]
    assert nodes[-2:] == [
        {"kind": "RELEASE_PUBLISHED", "slug": stored.release.id, "subject": None},
        {"kind": "RELEASE_DELETED", "slug": stored.release.id, "subject": None},
    ]
    only = await graphql.data(FEED, filter={"kinds": ["RELEASE_PUBLISHED"]})
    assert only["changes"]["nodes"] == [
        {"kind": "RELEASE_PUBLISHED", "slug": stored.release.id, "subject": None}
    ]


async def test_the_atom_feed_announces_a_release(client: httpx.AsyncClient, store: Store) -> None:
    stored, _ = await create_release(store, "First")
    feed = feedparser.parse((await client.get("/changes.atom")).content)
    newest = feed.entries[0]
    assert newest.title == f"New release: {stored.release.id}"
    assert newest.link.endswith(f"/releases/{stored.release.id}/manifest.json")
