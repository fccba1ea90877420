"""Feeds for people: `/changes.atom` and `/benchmarks/{slug}.atom` (Atom 1.0), one entry per
change with what it changed in words ("New leader: B (99.0) replaces A (82.8)").

Each is the change feed's query (`Query.changes(last:)`) rendered by feedgen: priced and paid
for as that query, kept until a change, with its ETag (server.resources.downloads' `answer`).
Links are
relative, so what is kept does not depend on the Host a request named.
"""

import re
from typing import Any

from feedgen.feed import FeedGenerator
from starlette.requests import Request
from starlette.responses import Response

from schema import Identity
from server.resources.downloads import Downloads, run_query
from store import Store

ATOM = "application/atom+xml; charset=utf-8"
ENTRIES = 50
FEED = """query AtomFeed($last: Int!, $filter: ChangeFilter) {
  changes(last: $last, filter: $filter) {
    nodes {
      sequence at kind slug recordedBy
      subject { ... on Benchmark { name } ... on Model { name } }
      read { readOn entryCount }
      leaderBefore { modelName score }
      leaderAfter { modelName score }
    }
  }
}"""
EPOCH = "1970-01-01T00:00:00Z"  # a feed's `updated` before its first entry
# What XML 1.0 cannot hold (control characters other than tab, newline and return; U+FFFE,
# U+FFFF; lone surrogates): the inputs refuse them, but a row stored before they did must not
# stop the feed being made.
NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


class Feeds:
    def __init__(self, downloads: Downloads) -> None:
        self.downloads = downloads

    async def changes(self, request: Request) -> Response:
        """`/changes.atom`: the newest changes to the almanac's data."""

        async def price(store: Store) -> int:
            return self._price({"last": ENTRIES})

        async def make(identity: Identity | None, read: set[str]) -> bytes:
            data = await run_query(
                self.downloads.store, request, identity, read, FEED, {"last": ENTRIES}
            )
            return atom(
                "urn:benchmark-almanac:changes",
                "Benchmark Almanac: changes",
                "/changes.atom",
                data["changes"]["nodes"],
            )

        return await self.downloads.answer(request, price, make, "", None, ATOM, None)

    async def benchmark(self, request: Request) -> Response:
        """`/benchmarks/{slug}.atom`: the newest changes to one benchmark."""
        slug = request.path_params["slug"]
        variables = {"last": ENTRIES, "filter": {"benchmarks": [slug]}}

        async def price(store: Store) -> int | None:
            return None if await store.leaderboard_size(slug) is None else self._price(variables)

        async def make(identity: Identity | None, read: set[str]) -> bytes:
            data = await run_query(self.downloads.store, request, identity, read, FEED, variables)
            return atom(
                f"urn:benchmark-almanac:benchmark:{slug}",
                f"Benchmark Almanac: {slug}",
                f"/benchmarks/{slug}.atom",
                data["changes"]["nodes"],
            )

        missing = f"There is no benchmark with slug {slug!r}."
        return await self.downloads.answer(request, price, make, missing, None, ATOM, None)

    def _price(self, variables: dict[str, Any]) -> int:
        return self.downloads.charges.price_download(FEED, variables)


def atom(feed_id: str, title: str, path: str, changes: list[dict[str, Any]]) -> bytes:
    """An Atom document of these changes (oldest first), newest first as feeds are read."""
    feed = FeedGenerator()
    feed.id(feed_id)
    feed.title(title)
    feed.link(href=path, rel="self")
    feed.author({"name": "Benchmark Almanac"})
    feed.updated(changes[-1]["at"] if changes else EPOCH)
    for change in changes:
        entry = feed.add_entry()  # each added first: the newest ends on top
        entry.id(f"urn:benchmark-almanac:change:{change['sequence']}")
        entry.title(_xml(described(change)))
        entry.updated(change["at"])
        entry.author({"name": _xml(change["recordedBy"] or "Benchmark Almanac")})
        entry.content(_xml(described(change, whole=True)), type="text")
        if (link := _link(change)) is not None:
            entry.link(href=link, rel="alternate")
    body: bytes = feed.atom_str(pretty=True)
    return body


def _xml(text: str) -> str:
    """`text` with what XML cannot hold shown as U+FFFD."""
    return NOT_XML.sub("\ufffd", text)


def described(change: dict[str, Any], *, whole: bool = False) -> str:
    """What a change did, in words: its title, or (`whole`) with the read's details."""
    name = (change["subject"] or {}).get("name") or change["slug"] or "the almanac"
    kind = change["kind"]
    if kind == "READ_RECORDED":
        before, after = change["leaderBefore"], change["leaderAfter"]
        if after is None:
            leading = "no leader"
        elif before is None:
            leading = f"Leader: {_row(after)}"
        elif before["modelName"] != after["modelName"]:
            leading = f"New leader: {_row(after)} replaces {_row(before)}"
        else:
            leading = f"Leader still {_row(after)}"
        title = f"{name}: {leading}"
        read = change["read"]
        if whole and read is not None:
            rows = read["entryCount"]
            return f"{title}. A read of {rows} rows, from the source on {read['readOn']}."
        return title
    what = {
        "BENCHMARK_CREATED": f"New benchmark: {name}",
        "BENCHMARK_UPDATED": f"{name}: its description, family or status changed",
        "MODEL_CREATED": f"Now tracked: {name}",
        "MODEL_UPDATED": f"{name}: the tracked model changed",
        "LAB_CREATED": f"New lab: {name}",
        "CATEGORY_CREATED": f"New category: {name}",
        "PLACEMENTS_UPDATED": "Tracked models placed anew on the leaderboards naming them",
        "RELEASE_PUBLISHED": f"New release: {name}",
        "RELEASE_DELETED": f"Release deleted: {name}",
    }
    return what.get(kind, f"{name}: changed")


def _row(row: dict[str, Any]) -> str:
    return f"{row['modelName']} ({row['score']})"


def _link(change: dict[str, Any]) -> str | None:
    if change["kind"] == "RELEASE_PUBLISHED":
        return f"/releases/{change['slug']}/manifest.json"
    if change["subject"] is None or change["slug"] is None:
        return None
    if change["kind"].startswith("MODEL"):
        return f"/models/{change['slug']}.csv"
    return f"/benchmarks/{change['slug']}.json"
