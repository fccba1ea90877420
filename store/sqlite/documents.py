"""Writes of the almanac's documents on the embedded store, each one transaction."""

import sqlite3
from collections.abc import Iterable
from typing import Any

import orjson

from store import subjects
from store.changes import ChangeDraft, ChangeKind, ChangeReceipt, document_change
from store.documents import LeadersDoc, TrackedRankDoc
from store.queries import AlreadyExists, Collection, Write
from store.sqlite.changelog import Drafts
from store.sqlite.connection import SqliteConnection
from store.sqlite.rows import insert_ranks, insert_row, placements_of, replace_row
from store.sqlite.tables import dumps
from store.subjects import SITE, placements, ranks_moved


class DocumentWrites(SqliteConnection):
    """The `Documents` role (store.interface)."""

    async def replace(
        self,
        collection: Collection,
        key: dict[str, Any],
        doc: Any,
        *,
        along: dict[str, dict[str, Any]] | None = None,
        receipt: ChangeReceipt | None = None,
    ) -> str:
        """Write a site record in place of the one under `key`: "created", "updated" or
        "unchanged"; with the site records `along` (by id) in the same transaction."""
        assert collection == "site"
        records = {key["_id"]: doc, **(along or {})}

        def write(connection: sqlite3.Connection, drafts: Drafts) -> str:
            results = []
            for ident, record in records.items():
                blob = dumps({k: v for k, v in record.items() if k != "_id"})
                held = connection.execute("SELECT doc FROM site WHERE id = ?", (ident,)).fetchone()
                if held is not None and held[0] == blob:
                    results.append("unchanged")
                    continue
                connection.execute(
                    "INSERT OR REPLACE INTO site (id, doc) VALUES (?, ?)", (ident, blob)
                )
                drafts.append(document_change("site", held, {"slug": ident}, [SITE]))
                results.append("updated" if held is not None else "created")
            return results[0]

        return await self._write(write, receipt)

    async def insert(
        self,
        collection: Collection,
        doc: Any,
        *,
        by: str | None = None,
        receipt: ChangeReceipt | None = None,
    ) -> None:
        """Store a new document; `AlreadyExists` if its slug, key or name is taken."""
        await self.insert_many(collection, [doc], by=by, receipt=receipt)

    async def insert_many(
        self,
        collection: Collection,
        docs: Iterable[Any],
        *,
        by: str | None = None,
        receipt: ChangeReceipt | None = None,
    ) -> None:
        """Store new documents in one transaction: all of them, or none."""
        docs = list(docs)

        def write(connection: sqlite3.Connection, drafts: Drafts) -> None:
            for doc in docs:
                drafts.append(insert_row(connection, collection, doc, by))

        await self._write(write, receipt)

    async def replace_at_revision(
        self,
        collection: Collection,
        slug: str,
        revision: int,
        doc: Any,
        *,
        receipt: ChangeReceipt | None = None,
    ) -> bool:
        """Replace the document `slug` if it is still at `revision`; False if it moved on."""

        def write(connection: sqlite3.Connection, drafts: Drafts) -> bool:
            change = replace_row(connection, collection, slug, revision, doc)
            if change is not None:
                drafts.append(change)
            return change is not None

        return await self._write(write, receipt)

    async def write_batch(
        self, writes: list[Write], *, receipt: ChangeReceipt | None = None
    ) -> list[bool]:
        """Many writes in one transaction, each whole or not at all (a savepoint each): False
        for one refused, because its key is taken or its document moved on."""

        def write(connection: sqlite3.Connection, drafts: Drafts) -> list[bool]:
            done = []
            for one in writes:
                connection.execute("SAVEPOINT one")
                change: ChangeDraft | None
                try:
                    if one.revision is None:
                        change = insert_row(connection, one.collection, one.doc)
                    else:
                        change = replace_row(
                            connection, one.collection, one.doc["slug"], one.revision, one.doc
                        )
                except AlreadyExists:
                    change = None
                if change is None:
                    connection.execute("ROLLBACK TO one")
                else:
                    drafts.append(change)
                connection.execute("RELEASE one")
                done.append(change is not None)
            return done

        return await self._write(write, receipt)

    async def set_tracked_ranks(
        self,
        ranks: dict[str, tuple[int, list[TrackedRankDoc]]],
        leaders: dict[str, LeadersDoc] | None = None,
        *,
        receipt: ChangeReceipt | None = None,
    ) -> list[str]:
        """Place tracked models anew on these benchmarks' leaderboards (derived data only), and
        with `leaders` (by slug) their summaries' leaders, each if it is still at the revision
        its placements were made from: the slugs that moved on (left as their writer placed
        them)."""

        def write(connection: sqlite3.Connection, drafts: Drafts) -> list[str]:
            moved, touched = [], set()
            for slug, (revision, placed) in ranks.items():
                held = connection.execute(
                    "SELECT doc, summary FROM benchmarks WHERE slug = ? AND revision = ?",
                    (slug, revision),
                ).fetchone()
                if held is None:
                    moved.append(slug)
                    continue
                before = placements_of(connection, slug)
                connection.execute("DELETE FROM model_ranks WHERE slug = ?", (slug,))
                insert_ranks(connection, slug, placed)
                touched |= ranks_moved(before, placements({"tracked_ranks": placed}))
                if leaders is not None and slug in leaders:
                    # In the document too, as on MongoDB: a write comparing it finds it current.
                    doc, summary = orjson.loads(held[0]), orjson.loads(held[1])
                    if summary.get("leaders") != leaders[slug]:
                        doc["leaders"] = summary["leaders"] = leaders[slug]
                        connection.execute(
                            "UPDATE benchmarks SET doc = ?, summary = ? WHERE slug = ?",
                            (dumps(doc), dumps(summary), slug),
                        )
                        touched.add(subjects.leaders(slug))
            if touched:
                drafts.append(ChangeDraft(ChangeKind.PLACEMENTS_UPDATED, frozenset(touched)))
            return moved

        return await self._write(write, receipt)
