"""The store on MongoDB as a whole: reachable, seeded, dumped."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from store.mongo.connection import NO_ID
from store.mongo.documents import DocumentWrites
from store.queries import SEED_ID, Collection, SeedState


class Keeping(DocumentWrites):
    """The `Keeping` role (store.interface); seeds mark themselves by a write."""

    async def ping(self) -> None:
        await self.db.command("ping")

    async def is_empty(self) -> bool:
        """Whether the database holds nothing of the almanac's yet."""
        return not await self.db.list_collection_names()

    async def seed_state(self) -> SeedState:
        """How far the bundled dataset's seed got, by its marker (see editing.importer)."""
        marker = await self.db.site.find_one({"_id": SEED_ID})
        if marker is not None:
            return SeedState.FINISHED if marker["finished"] else SeedState.STARTED
        return SeedState.NEW if await self.is_empty() else SeedState.UNMARKED

    async def mark_seed(self, finished: bool) -> None:
        """Say that a seed began (False), or, written after its last write, that it finished."""
        await self.replace(Collection.SITE, {"_id": SEED_ID}, {"finished": finished})

    @asynccontextmanager
    async def seed_lock(self) -> AsyncIterator[None]:
        """Nothing to hold: a MongoDB database is seeded only on request (`almanac seed`)."""
        yield

    async def dump(self) -> dict[str, list[Any]]:
        """Every document of every collection, as stored (for checks that nothing changed)."""
        return {
            name: await self.db[name].find({}, NO_ID if name != "site" else None).to_list(None)
            for name in sorted(await self.db.list_collection_names())
            if name not in ("changes", "counters", "webhooks", "webhook_deliveries")
        }
