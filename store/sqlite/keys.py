"""API keys on the embedded store."""

import sqlite3
from collections.abc import Callable
from typing import Any

import orjson

from store.changes import document_change
from store.documents import ApiKeyDoc, BudgetDoc
from store.sqlite.changelog import Drafts
from store.sqlite.connection import SqliteConnection
from store.sqlite.tables import dumps
from store.subjects import KEYS


class KeyRecords(SqliteConnection):
    """The `Keys` role (store.interface)."""

    async def api_key(self, key_id: str) -> ApiKeyDoc | None:
        found: list[ApiKeyDoc] = await self._docs(
            "SELECT doc FROM api_keys WHERE key_id IN", [key_id]
        )
        return found[0] if found else None

    async def api_keys(self) -> list[ApiKeyDoc]:
        return await self._docs("SELECT doc FROM api_keys", None, order="ORDER BY created_at")

    async def revoke_api_key(self, name: str, at: str) -> bool:
        """Revoke the key called `name`; False if there is no such key still in force."""
        return await self._change_api_key(name, lambda doc: {**doc, "revoked_at": at})

    async def set_api_key_budget(self, name: str, budget: BudgetDoc | None) -> bool:
        """Give the key called `name` its own budget, or the configured one again (None)."""

        def with_budget(doc: dict[str, Any]) -> dict[str, Any]:
            kept = {key: value for key, value in doc.items() if key != "budget"}
            return kept if budget is None else {**kept, "budget": budget}

        return await self._change_api_key(name, with_budget)

    async def _change_api_key(
        self, name: str, change: Callable[[dict[str, Any]], dict[str, Any]]
    ) -> bool:
        """Rewrite the key called `name` as `change` makes it; False if none is in force."""

        def write(connection: sqlite3.Connection, drafts: Drafts) -> bool:
            row = connection.execute(
                "SELECT doc FROM api_keys WHERE name = ? AND revoked_at IS NULL", (name,)
            ).fetchone()
            if row is None:
                return False
            doc = change(orjson.loads(row[0]))
            connection.execute(
                "UPDATE api_keys SET revoked_at = ?, doc = ? WHERE name = ?",
                (doc["revoked_at"], dumps(doc), name),
            )
            drafts.append(document_change("api_keys", row, {}, [KEYS]))
            return True

        return await self._write(write)
