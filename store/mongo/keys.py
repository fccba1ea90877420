"""API keys on MongoDB."""

from store.changes import document_change
from store.documents import ApiKeyDoc, BudgetDoc
from store.mongo.connection import NO_ID, MongoConnection
from store.subjects import KEYS


class KeyRecords(MongoConnection):
    """The `Keys` role (store.interface)."""

    async def api_key(self, key_id: str) -> ApiKeyDoc | None:
        doc: ApiKeyDoc | None = await self.db.api_keys.find_one({"key_id": key_id}, NO_ID)
        return doc

    async def api_keys(self) -> list[ApiKeyDoc]:
        return list(await self.db.api_keys.find({}, NO_ID).sort("created_at").to_list(None))

    async def revoke_api_key(self, name: str, at: str) -> bool:
        """Revoke the key called `name`; False if there is no such key still in force."""
        result = await self.db.api_keys.update_one(
            {"name": name, "revoked_at": None}, {"$set": {"revoked_at": at}}
        )
        if not result.modified_count:
            return False
        await self._log([document_change("api_keys", {}, {}, [KEYS])])
        return True

    async def set_api_key_budget(self, name: str, budget: BudgetDoc | None) -> bool:
        """Give the key called `name` its own budget, or the configured one again (None)."""
        change = {"$set": {"budget": budget}} if budget else {"$unset": {"budget": ""}}
        result = await self.db.api_keys.update_one({"name": name, "revoked_at": None}, change)
        if not result.matched_count:
            return False
        await self._log([document_change("api_keys", {}, {}, [KEYS])])
        return True
