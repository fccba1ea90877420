"""A store whose calls are watched: a decorating implementation of `Store` that runs each call a
request makes inside an observer's context (timed for the metrics, a span for the traces), and
passes everything else through. Observers compose by wrapping one observed store in another;
the store wrapped, and its class, are left as they are."""

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from pathlib import Path
from typing import Any

from store import (
    ApiKeyDoc,
    BenchmarkDoc,
    BenchmarkFilter,
    BenchmarkSummaryDoc,
    BudgetDoc,
    CategoryCountDoc,
    CategoryDoc,
    Change,
    ChangeFilter,
    Collection,
    DataVersion,
    DeliveryDoc,
    ItemCounts,
    LabDoc,
    LeadersDoc,
    ModelDoc,
    Neighbourhood,
    NeighbourhoodRequest,
    Order,
    SeedState,
    SiteFiguresDoc,
    Store,
    TrackedRankDoc,
    WebhookDoc,
    Write,
)

CallObserver = Callable[[str], AbstractContextManager[object]]
"""What watches a store call: given the method's name, the context the call runs in."""


class ObservedStore(Store):
    """`inner`, each call a request makes run within `observe(method)`. The change stream and
    `close` live as long as the process: they are not watched."""

    def __init__(self, inner: Store, observe: CallObserver) -> None:
        self.inner = inner
        self.observe = observe

    @property
    def embedded(self) -> bool:
        return self.inner.embedded

    @embedded.setter
    def embedded(self, value: bool) -> None:
        self.inner.embedded = value

    @property
    def version(self) -> DataVersion:
        return self.inner.version

    @version.setter
    def version(self, value: DataVersion) -> None:
        self.inner.version = value

    async def replace(
        self,
        collection: Collection,
        key: dict[str, Any],
        doc: Any,
        *,
        along: dict[str, dict[str, Any]] | None = None,
    ) -> str:
        with self.observe("replace"):
            return await self.inner.replace(collection, key, doc, along=along)

    async def insert(self, collection: Collection, doc: Any, *, by: str | None = None) -> None:
        with self.observe("insert"):
            await self.inner.insert(collection, doc, by=by)

    async def insert_many(
        self, collection: Collection, docs: list[Any], *, by: str | None = None
    ) -> None:
        with self.observe("insert_many"):
            await self.inner.insert_many(collection, docs, by=by)

    async def replace_at_revision(
        self, collection: Collection, slug: str, revision: int, doc: Any
    ) -> bool:
        with self.observe("replace_at_revision"):
            return await self.inner.replace_at_revision(collection, slug, revision, doc)

    async def write_batch(self, writes: list[Write]) -> list[bool]:
        with self.observe("write_batch"):
            return await self.inner.write_batch(writes)

    async def ping(self) -> None:
        with self.observe("ping"):
            await self.inner.ping()

    async def documents_by_slugs(self, collection: Collection, slugs: list[str]) -> list[Any]:
        with self.observe("documents_by_slugs"):
            return await self.inner.documents_by_slugs(collection, slugs)

    async def benchmarks_by_slugs(self, slugs: list[str]) -> list[BenchmarkDoc]:
        with self.observe("benchmarks_by_slugs"):
            return await self.inner.benchmarks_by_slugs(slugs)

    async def benchmark_with_neighbourhood(
        self, slug: str, siblings: int
    ) -> tuple[BenchmarkDoc, Neighbourhood] | None:
        with self.observe("benchmark_with_neighbourhood"):
            return await self.inner.benchmark_with_neighbourhood(slug, siblings)

    async def neighbourhoods(self, requests: list[NeighbourhoodRequest]) -> list[Neighbourhood]:
        with self.observe("neighbourhoods"):
            return await self.inner.neighbourhoods(requests)

    async def benchmarks_with_model_keys(self, keys: list[str]) -> list[BenchmarkDoc]:
        with self.observe("benchmarks_with_model_keys"):
            return await self.inner.benchmarks_with_model_keys(keys)

    async def benchmarks_without_leaders(self, after: str, limit: int) -> list[BenchmarkDoc]:
        with self.observe("benchmarks_without_leaders"):
            return await self.inner.benchmarks_without_leaders(after, limit)

    async def benchmark_page(
        self, where: BenchmarkFilter, order: Order, after: list[Any] | None, limit: int
    ) -> tuple[list[BenchmarkSummaryDoc], int]:
        with self.observe("benchmark_page"):
            return await self.inner.benchmark_page(where, order, after, limit)

    async def leaderboard_size(self, slug: str) -> int | None:
        with self.observe("leaderboard_size"):
            return await self.inner.leaderboard_size(slug)

    async def benchmark_parents(self) -> dict[str, str | None]:
        with self.observe("benchmark_parents"):
            return await self.inner.benchmark_parents()

    async def categories(self) -> list[CategoryCountDoc]:
        with self.observe("categories"):
            return await self.inner.categories()

    async def models_by_keys(self, keys: list[str]) -> list[ModelDoc]:
        with self.observe("models_by_keys"):
            return await self.inner.models_by_keys(keys)

    async def models_by_slugs(self, slugs: list[str]) -> list[ModelDoc]:
        with self.observe("models_by_slugs"):
            return await self.inner.models_by_slugs(slugs)

    async def models(self) -> list[ModelDoc]:
        with self.observe("models"):
            return await self.inner.models()

    async def benchmarks(self) -> list[BenchmarkDoc]:
        with self.observe("benchmarks"):
            return await self.inner.benchmarks()

    async def site_figures(self) -> SiteFiguresDoc:
        with self.observe("site_figures"):
            return await self.inner.site_figures()

    async def provenance(self) -> list[str]:
        with self.observe("provenance"):
            return await self.inner.provenance()

    async def labs(self) -> list[LabDoc]:
        with self.observe("labs"):
            return await self.inner.labs()

    async def known_categories(self) -> list[CategoryDoc]:
        with self.observe("known_categories"):
            return await self.inner.known_categories()

    async def api_key(self, key_id: str) -> ApiKeyDoc | None:
        with self.observe("api_key"):
            return await self.inner.api_key(key_id)

    async def api_keys(self) -> list[ApiKeyDoc]:
        with self.observe("api_keys"):
            return await self.inner.api_keys()

    async def revoke_api_key(self, name: str, at: str) -> bool:
        with self.observe("revoke_api_key"):
            return await self.inner.revoke_api_key(name, at)

    async def set_api_key_budget(self, name: str, budget: BudgetDoc | None) -> bool:
        with self.observe("set_api_key_budget"):
            return await self.inner.set_api_key_budget(name, budget)

    async def model_results(
        self, model: str, offset: int, limit: int
    ) -> tuple[list[BenchmarkDoc], int]:
        with self.observe("model_results"):
            return await self.inner.model_results(model, offset, limit)

    async def set_tracked_ranks(
        self,
        ranks: dict[str, tuple[int, list[TrackedRankDoc]]],
        leaders: dict[str, LeadersDoc] | None = None,
    ) -> list[str]:
        with self.observe("set_tracked_ranks"):
            return await self.inner.set_tracked_ranks(ranks, leaders)

    async def item_counts(self) -> ItemCounts:
        with self.observe("item_counts"):
            return await self.inner.item_counts()

    async def documents_in_batches(
        self, collection: Collection, size: int
    ) -> AsyncIterator[list[Any]]:
        """Each batch's round trip watched as a call of its own."""
        batches = aiter(self.inner.documents_in_batches(collection, size))
        while True:
            with self.observe("documents_in_batches"):
                batch = await anext(batches, None)
            if batch is None:
                return
            yield batch

    async def is_empty(self) -> bool:
        with self.observe("is_empty"):
            return await self.inner.is_empty()

    async def seed_state(self) -> SeedState:
        with self.observe("seed_state"):
            return await self.inner.seed_state()

    async def mark_seed(self, finished: bool) -> None:
        with self.observe("mark_seed"):
            await self.inner.mark_seed(finished)

    def seed_lock(self) -> AbstractAsyncContextManager[None]:
        return self.inner.seed_lock()  # held for a whole seed: not one call to watch

    async def dump(self) -> dict[str, list[Any]]:
        with self.observe("dump"):
            return await self.inner.dump()

    async def follow_changes(self) -> None:
        await self.inner.follow_changes()

    async def changes_after(
        self,
        sequence: int,
        limit: int,
        where: ChangeFilter | None = None,
        *,
        newest_first: bool = False,
    ) -> list[Change]:
        with self.observe("changes_after"):
            return await self.inner.changes_after(sequence, limit, where, newest_first=newest_first)

    async def change_bounds(self) -> tuple[int, int]:
        with self.observe("change_bounds"):
            return await self.inner.change_bounds()

    async def insert_webhook(self, doc: WebhookDoc, most: int) -> bool:
        with self.observe("insert_webhook"):
            return await self.inner.insert_webhook(doc, most)

    async def webhook(self, webhook_id: str) -> WebhookDoc | None:
        with self.observe("webhook"):
            return await self.inner.webhook(webhook_id)

    async def webhooks(self, owner: str | None = None) -> list[WebhookDoc]:
        with self.observe("webhooks"):
            return await self.inner.webhooks(owner)

    async def update_webhook(
        self, webhook_id: str, fields: dict[str, Any], holder: str | None = None
    ) -> bool:
        with self.observe("update_webhook"):
            return await self.inner.update_webhook(webhook_id, fields, holder)

    async def delete_webhook(self, webhook_id: str) -> bool:
        with self.observe("delete_webhook"):
            return await self.inner.delete_webhook(webhook_id)

    async def take_webhook_lease(
        self, webhook_id: str, holder: str, now: float, until: float
    ) -> bool:
        with self.observe("take_webhook_lease"):
            return await self.inner.take_webhook_lease(webhook_id, holder, now, until)

    async def save_delivery(self, doc: DeliveryDoc) -> None:
        with self.observe("save_delivery"):
            await self.inner.save_delivery(doc)

    async def delivery(self, delivery_id: str) -> DeliveryDoc | None:
        with self.observe("delivery"):
            return await self.inner.delivery(delivery_id)

    async def deliveries(
        self, webhook_id: str, limit: int, status: str | None = None
    ) -> list[DeliveryDoc]:
        with self.observe("deliveries"):
            return await self.inner.deliveries(webhook_id, limit, status)

    async def prune_deliveries(self, before: str) -> int:
        with self.observe("prune_deliveries"):
            return await self.inner.prune_deliveries(before)

    async def backup(self, target: Path) -> None:
        with self.observe("backup"):
            await self.inner.backup(target)

    async def close(self) -> None:
        await self.inner.close()
