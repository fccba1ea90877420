"""The Atom feeds: what changed, in words, read back by a feed reader; priced as their query,
kept with an ETag, and linked from the front door and every download."""

import feedparser
import httpx

from server.resources.feeds import ENTRIES, FEED
from store import Collection, Store
from tests.conftest import GraphQLClient

GENERAL = "code-interpreter-benchmark-general"
RECORD = """mutation($slug: String!, $input: LeaderboardReadInput!) {
  recordLeaderboardRead(benchmark: $slug, input: $input) { recorded } }"""
READ = {
    "readOn": "2026-11-20",
    "entries": [
        {"modelName": "Qwen-14B-Chat", "score": 99.0, "setting": "v1", "publishedOn": "2026-11-01"}
    ],
    "allowRemovals": True,
}


async def test_a_recorded_read_is_an_entry_naming_the_new_leader(
    client: httpx.AsyncClient, admin: GraphQLClient
) -> None:
    await admin.data(RECORD, slug=GENERAL, input=READ)
    await admin.data(
        """mutation { createBenchmark(slug: "far-bench", input: {name: "Far <Bench> & Co",
             metric: {name: "Accuracy", unit: PERCENT}, category: "tool-use"}) { slug } }"""
    )
    for path in ("/changes.atom", f"/benchmarks/{GENERAL}.atom"):
        answered = await client.get(path)
        assert answered.status_code == 200
        assert answered.headers["content-type"].startswith("application/atom+xml")
        feed = feedparser.parse(answered.content)
        assert not feed.bozo, feed.bozo_exception  # well-formed: the names are escaped
        titles = [entry.title for entry in feed.entries]
        leader = "Code Interpreter Benchmark General: New leader: Qwen-14B (99.0) replaces"
        newest = titles[1] if path == "/changes.atom" else titles[0]
        assert newest.startswith(leader), titles
        assert "(82.8)" in newest
        if path == "/changes.atom":
            assert titles[0] == "New benchmark: Far <Bench> & Co"  # newest first
        else:
            assert all("Code Interpreter Benchmark General" in title for title in titles)
        assert answered.headers["ratelimit-remaining"]  # charged as its query


async def test_a_feed_is_kept_with_its_etag_and_linked_from_downloads(
    client: httpx.AsyncClient,
) -> None:
    first = await client.get("/changes.atom")
    again = await client.get("/changes.atom", headers={"If-None-Match": first.headers["etag"]})
    assert again.status_code == 304
    download = await client.get(f"/benchmarks/{GENERAL}.csv")
    assert f"</benchmarks/{GENERAL}.atom>" in download.headers["link"]
    assert "/changes.atom" in (await client.get("/models/qwen-14b.csv")).headers["link"]
    links = (await client.get("/")).json()["links"]
    assert links["changesFeed"] == "/changes.atom"
    missing = await client.get("/benchmarks/no-such-benchmark.atom")
    assert missing.status_code == 404


async def test_a_stored_noncharacter_does_not_stop_the_feed(
    store: Store, client: httpx.AsyncClient
) -> None:
    """Text stored before the inputs refused noncharacters (XML cannot hold U+FFFE or U+FFFF)
    and control characters: shown as U+FFFD, the feed still made."""
    [benchmark] = await store.benchmarks_by_slugs([GENERAL])
    changed = {**benchmark, "name": "General\ufffe\uffff\x1b", "updated_by": "ops\ufffe"}
    assert await store.replace_at_revision(
        Collection.BENCHMARKS, GENERAL, benchmark["revision"], changed
    )
    for path in ("/changes.atom", f"/benchmarks/{GENERAL}.atom"):
        answered = await client.get(path)
        assert answered.status_code == 200, answered.text
        feed = feedparser.parse(answered.content)
        assert not feed.bozo, feed.bozo_exception
        newest = feed.entries[0]
        assert newest.title.startswith("General\ufffd\ufffd\ufffd: ")
        assert newest.author == "ops\ufffd"


async def test_a_feed_costs_what_its_query_costs(client: httpx.AsyncClient) -> None:
    """Priced for the `last` 50 changes its query asks for, as the same query sent is: each a
    change with its subject, its read and two leaders."""
    general = {"last": ENTRIES, "filter": {"benchmarks": [GENERAL]}}
    for path, variables in (
        ("/changes.atom", {"last": ENTRIES}),
        (f"/benchmarks/{GENERAL}.atom", general),
    ):
        feed = await client.get(path)
        sent = (await client.post("/graphql", json={"query": FEED, "variables": variables})).json()
        charged = sent["extensions"]["cost"]["requestedQueryCost"]
        assert int(feed.headers["almanac-cost"]) == charged == 1 + ENTRIES * (1 + 4)
