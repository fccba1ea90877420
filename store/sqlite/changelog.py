"""The change log's table (store.changes): appending a write's changes in its transaction,
its bounds, and a row as a `Change`."""

import sqlite3
from typing import Any

import orjson

from store.changes import Change, ChangeDraft, ChangeKind, now_instant
from store.sqlite.tables import dumps

Drafts = list[ChangeDraft]
"""The changes a write describes, as it makes them."""

CHANGE_COLUMNS = "sequence, at, kind, collection, slug, revision, by, category, subjects"


def bounds_of(connection: sqlite3.Connection) -> tuple[int, int]:
    (newest,) = connection.execute(
        "SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'changes'"
    ).fetchone()
    (oldest,) = connection.execute("SELECT min(sequence) FROM changes").fetchone()
    return (newest + 1 if oldest is None else oldest, newest)


def append_changes(connection: sqlite3.Connection, drafts: Drafts) -> list[Change]:
    """Append these changes to the log (in the writer's transaction): as numbered."""
    at, logged = now_instant(), []
    for draft in drafts:
        cursor = connection.execute(
            "INSERT INTO changes (at, kind, collection, slug, revision, by, category, subjects) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                at,
                draft.kind.value,
                draft.collection,
                draft.slug,
                draft.revision,
                draft.by,
                draft.category,
                dumps(sorted(draft.subjects)).decode(),
            ),
        )
        assert cursor.lastrowid is not None
        logged.append(Change(**vars(draft), sequence=cursor.lastrowid, at=at))
    return logged


def change_of(row: tuple[Any, ...]) -> Change:
    sequence, at, kind, collection, slug, revision, by, category, subjects = row
    return Change(
        kind=ChangeKind(kind),
        subjects=frozenset(orjson.loads(subjects)),
        collection=collection,
        slug=slug,
        revision=revision,
        by=by,
        category=category,
        sequence=sequence,
        at=at,
    )
