"""Webhooks on MongoDB: one round trip each, logging no change (`_id` is the webhook's or
event's id)."""

import contextlib
from typing import Any

from pymongo.errors import DuplicateKeyError

from store.documents import DeliveryDoc, WebhookDoc
from store.mongo.connection import NO_ID, MongoConnection


class WebhookRecords(MongoConnection):
    """The `Webhooks` role (store.interface)."""

    async def insert_webhook(self, doc: WebhookDoc, most: int) -> bool:
        """The owner's count of webhooks is a counters document, taken by one conditional
        update before the insert (made, from the webhooks stored, the first time)."""
        owner, counter = doc["owner"], _webhook_counter(doc["owner"])
        stored = await self.db.webhooks.count_documents({"owner": owner})
        with contextlib.suppress(DuplicateKeyError):  # made meanwhile by another creation
            await self.db.counters.update_one(
                {"_id": counter}, {"$setOnInsert": {"count": stored}}, upsert=True
            )
        taken = await self.db.counters.update_one(
            {"_id": counter, "count": {"$lt": most}}, {"$inc": {"count": 1}}
        )
        if not taken.modified_count:
            return False
        try:
            await self.db.webhooks.insert_one({"_id": doc["id"], **doc})
        except BaseException:  # not made: its place is given back, or the key loses it for good
            await self.db.counters.update_one({"_id": counter}, {"$inc": {"count": -1}})
            raise
        return True

    async def webhook(self, webhook_id: str) -> WebhookDoc | None:
        doc: WebhookDoc | None = await self.db.webhooks.find_one({"_id": webhook_id}, NO_ID)
        return doc

    async def webhooks(self, owner: str | None = None) -> list[WebhookDoc]:
        query = {} if owner is None else {"owner": owner}
        cursor = self.db.webhooks.find(query, NO_ID).sort("created_at")
        return list(await cursor.to_list(None))

    async def update_webhook(
        self, webhook_id: str, fields: dict[str, Any], holder: str | None = None
    ) -> bool:
        query: dict[str, Any] = {"_id": webhook_id}
        if holder is not None:
            query["lease_holder"] = holder
        result = await self.db.webhooks.update_one(query, {"$set": fields})
        return bool(result.matched_count)

    async def delete_webhook(self, webhook_id: str) -> bool:
        doc = await self.db.webhooks.find_one_and_delete({"_id": webhook_id}, {"owner": 1})
        await self.db.webhook_deliveries.delete_many({"webhook": webhook_id})
        if doc is None:
            return False
        await self.db.counters.update_one(
            {"_id": _webhook_counter(doc["owner"])}, {"$inc": {"count": -1}}
        )
        return True

    async def take_webhook_lease(
        self, webhook_id: str, holder: str, now: float, until: float
    ) -> bool:
        result = await self.db.webhooks.update_one(
            {
                "_id": webhook_id,
                "enabled": True,
                "$or": [{"lease_holder": holder}, {"lease_until": {"$lt": now}}],
            },
            {"$set": {"lease_holder": holder, "lease_until": until}},
        )
        return bool(result.matched_count)

    async def save_delivery(self, doc: DeliveryDoc) -> None:
        await self.db.webhook_deliveries.replace_one(
            {"_id": doc["id"]}, {"_id": doc["id"], **doc}, upsert=True
        )

    async def delivery(self, delivery_id: str) -> DeliveryDoc | None:
        doc: DeliveryDoc | None = await self.db.webhook_deliveries.find_one(
            {"_id": delivery_id}, NO_ID
        )
        return doc

    async def deliveries(
        self, webhook_id: str, limit: int, status: str | None = None
    ) -> list[DeliveryDoc]:
        query: dict[str, Any] = {"webhook": webhook_id}
        if status is not None:
            query["status"] = status
        cursor = self.db.webhook_deliveries.find(query, NO_ID)
        return list(await cursor.sort([("created_at", -1), ("_id", -1)]).limit(limit).to_list(None))

    async def prune_deliveries(self, before: str) -> int:
        result = await self.db.webhook_deliveries.delete_many(
            {"status": {"$in": ["delivered", "failed"]}, "created_at": {"$lt": before}}
        )
        return int(result.deleted_count)


def _webhook_counter(owner: str) -> str:
    """The counters document holding how many webhooks the key called `owner` has."""
    return f"webhooks:{owner}"
