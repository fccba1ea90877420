"""The change log on the embedded store: read by the feed, subscriptions, webhooks and this
process's follower."""

import sqlite3

from store.changes import Change, ChangeFilter
from store.sqlite.changelog import CHANGE_COLUMNS, bounds_of, change_of
from store.sqlite.connection import SqliteConnection


class ChangeLogReads(SqliteConnection):
    """The `ChangeLog` role (store.interface)."""

    async def follow_changes(self) -> None:
        """Apply the changes other processes log, as they log them, until cancelled."""
        await self.follower.follow(self.changes_after, self.change_bounds)

    async def change_applied(self, sequence: int) -> None:
        """Return once this process has applied every change up to `sequence`."""
        await self.follower.applied(sequence)

    async def changes_after(
        self,
        sequence: int,
        limit: int,
        where: ChangeFilter | None = None,
        *,
        newest_first: bool = False,
    ) -> list[Change]:
        """Up to `limit` changes of the log after `sequence` (those `where` matches), oldest
        first: the first `limit` of them, or the last (`newest_first`), newest first."""
        conditions, values = ["sequence > ?"], list[object]([sequence])
        if where is not None:
            if where.kinds is not None:
                conditions.append(f"kind IN ({','.join('?' * len(where.kinds))})")
                values += sorted(map(str, where.kinds))
            if documents := where.documents():
                either = []
                for collection, slugs in documents.items():
                    either.append(f"(collection = ? AND slug IN ({','.join('?' * len(slugs))}))")
                    values += [collection, *sorted(slugs)]
                conditions.append(f"({' OR '.join(either)})")
            if where.category is not None:
                conditions.append("category = ?")
                values.append(where.category)

        def read(connection: sqlite3.Connection) -> list[Change]:
            rows = connection.execute(
                f"SELECT {CHANGE_COLUMNS} FROM changes WHERE {' AND '.join(conditions)} "
                f"ORDER BY sequence {'DESC' if newest_first else ''} LIMIT ?",
                [*values, limit],
            ).fetchall()
            return [change_of(row) for row in rows]

        return await self._run(read)

    async def change_bounds(self) -> tuple[int, int]:
        """The sequence numbers of the log's oldest change kept (the next one while none is)
        and of its newest ever (0 before the first)."""

        def read(connection: sqlite3.Connection) -> tuple[int, int]:
            return bounds_of(connection)

        return await self._run(read)
