"""Webhooks on the embedded store: written in transactions of their own, logging no change."""

import sqlite3
from typing import Any

import orjson

from store.documents import DeliveryDoc, WebhookDoc
from store.sqlite.changelog import Drafts
from store.sqlite.connection import SqliteConnection
from store.sqlite.tables import dumps


class WebhookRecords(SqliteConnection):
    """The `Webhooks` role (store.interface)."""

    async def insert_webhook(self, doc: WebhookDoc, most: int) -> bool:
        def write(connection: sqlite3.Connection, _: Drafts) -> bool:
            cursor = connection.execute(  # one statement: the count and the insert together
                "INSERT INTO webhooks (id, owner, doc) SELECT ?, ?, ? "
                "WHERE (SELECT count(*) FROM webhooks WHERE owner = ?) < ?",
                (doc["id"], doc["owner"], dumps(doc).decode(), doc["owner"], most),
            )
            return cursor.rowcount > 0

        return await self._write(write)

    async def webhook(self, webhook_id: str) -> WebhookDoc | None:
        found = await self._docs("SELECT doc FROM webhooks WHERE id IN", [webhook_id])
        return found[0] if found else None

    async def webhooks(self, owner: str | None = None) -> list[WebhookDoc]:
        if owner is None:
            return await self._docs("SELECT doc FROM webhooks", None, order="ORDER BY rowid")
        return await self._docs(
            "SELECT doc FROM webhooks WHERE owner IN", [owner], order="ORDER BY rowid"
        )

    async def update_webhook(
        self, webhook_id: str, fields: dict[str, Any], holder: str | None = None
    ) -> bool:
        def write(connection: sqlite3.Connection, _: Drafts) -> bool:
            row = connection.execute(
                "SELECT doc FROM webhooks WHERE id = ?", (webhook_id,)
            ).fetchone()
            if row is None:
                return False
            doc = orjson.loads(row[0])
            if holder is not None and doc["lease_holder"] != holder:
                return False
            connection.execute(
                "UPDATE webhooks SET doc = ? WHERE id = ?",
                (dumps({**doc, **fields}).decode(), webhook_id),
            )
            return True

        return await self._write(write)

    async def delete_webhook(self, webhook_id: str) -> bool:
        def write(connection: sqlite3.Connection, _: Drafts) -> bool:
            cursor = connection.execute("DELETE FROM webhooks WHERE id = ?", (webhook_id,))
            return cursor.rowcount > 0

        return await self._write(write)

    async def take_webhook_lease(
        self, webhook_id: str, holder: str, now: float, until: float
    ) -> bool:
        def write(connection: sqlite3.Connection, _: Drafts) -> bool:
            cursor = connection.execute(
                "UPDATE webhooks SET doc = json_set(doc, '$.lease_holder', ?, "
                "'$.lease_until', ?) WHERE id = ? AND json_extract(doc, '$.enabled') "
                "AND (json_extract(doc, '$.lease_holder') IS ? "
                "OR json_extract(doc, '$.lease_until') < ?)",
                (holder, until, webhook_id, holder, now),
            )
            return cursor.rowcount > 0

        return await self._write(write)

    async def save_delivery(self, doc: DeliveryDoc) -> None:
        def write(connection: sqlite3.Connection, _: Drafts) -> None:
            connection.execute(
                "INSERT OR REPLACE INTO webhook_deliveries (id, webhook, status, created_at, doc) "
                "VALUES (?, ?, ?, ?, ?)",
                (doc["id"], doc["webhook"], doc["status"], doc["created_at"], dumps(doc)),
            )

        await self._write(write)

    async def delivery(self, delivery_id: str) -> DeliveryDoc | None:
        found = await self._docs("SELECT doc FROM webhook_deliveries WHERE id IN", [delivery_id])
        return found[0] if found else None

    async def deliveries(
        self, webhook_id: str, limit: int, status: str | None = None
    ) -> list[DeliveryDoc]:
        wanted = "" if status is None else " AND status = ?"

        def read(connection: sqlite3.Connection) -> list[DeliveryDoc]:
            rows = connection.execute(
                f"SELECT doc FROM webhook_deliveries WHERE webhook = ?{wanted} "
                "ORDER BY created_at DESC, rowid DESC LIMIT ?",
                [webhook_id, *([] if status is None else [status]), limit],
            ).fetchall()
            return [orjson.loads(blob) for (blob,) in rows]

        return await self._run(read)

    async def prune_deliveries(self, before: str) -> int:
        def write(connection: sqlite3.Connection, _: Drafts) -> int:
            cursor = connection.execute(
                "DELETE FROM webhook_deliveries WHERE status IN ('delivered', 'failed') "
                "AND created_at < ?",
                (before,),
            )
            return cursor.rowcount

        return await self._write(write)
