"""What each request carries: the store and its DataLoaders, so a page costs a fixed
number of round trips however many rows or siblings it shows."""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property

from starlette.requests import Request
from starlette.websockets import WebSocket
from strawberry.dataloader import DataLoader

from resolvers import index_by_key, model_key
from schema.caller import Identity
from schema.extensions.services import OperationState
from store import (
    BenchmarkDoc,
    ChangeReceipt,
    EntryDoc,
    ModelDoc,
    Neighbourhood,
    NeighbourhoodRequest,
    Store,
    noting_reads,
)


@dataclass
class Loaders:
    """Per-request loaders: each batches the loads of one tick into one store call. Each is
    made when first used: a request answered from a kept answer makes none."""

    store: Store

    @cached_property
    def benchmark_by_slug(self) -> DataLoader[str, BenchmarkDoc | None]:
        return DataLoader(self._benchmarks_by_slug)

    @cached_property
    def model_by_key(self) -> DataLoader[str, ModelDoc | None]:
        return DataLoader(self._models_by_key)

    @cached_property
    def model_by_slug(self) -> DataLoader[str, ModelDoc | None]:
        return DataLoader(self._models_by_slug)

    @cached_property
    def neighbourhood(self) -> DataLoader[NeighbourhoodRequest, Neighbourhood]:
        return DataLoader(self._neighbourhoods)

    async def _benchmarks_by_slug(self, slugs: list[str]) -> list[BenchmarkDoc | None]:
        found = {doc["slug"]: doc for doc in await self.store.benchmarks_by_slugs(slugs)}
        return [found.get(slug) for slug in slugs]

    async def _models_by_key(self, keys: list[str]) -> list[ModelDoc | None]:
        found = index_by_key(await self.store.models_by_keys(keys))
        return [found.get(key) for key in keys]

    async def _models_by_slug(self, slugs: list[str]) -> list[ModelDoc | None]:
        found = {doc["slug"]: doc for doc in await self.store.models_by_slugs(slugs)}
        return [found.get(slug) for slug in slugs]

    async def _neighbourhoods(self, requests: list[NeighbourhoodRequest]) -> list[Neighbourhood]:
        return await self.store.neighbourhoods(requests)

    async def tracked_models(self, docs: Iterable[BenchmarkDoc]) -> dict[str, ModelDoc]:
        """The tracked models named by the entries of these benchmarks, by lookup key."""
        return await self.tracked_models_of_entries(
            [entry for doc in docs for entry in doc["entries"]], {}
        )

    async def tracked_models_of_entries(
        self, entries: Iterable[EntryDoc], known: Mapping[str, ModelDoc]
    ) -> dict[str, ModelDoc]:
        """The tracked models named by these entries, by lookup key (adding to `known`)."""
        keys = list({model_key(entry["model_name"]) for entry in entries} - set(known))
        models = await self.model_by_key.load_many(keys)
        found = {key: model for key, model in zip(keys, models, strict=True) if model is not None}
        return {**known, **found}


@dataclass(kw_only=True)
class Context(OperationState):
    """A request's context: what the extensions read and note (`OperationState`), its
    loaders, and the connection it came by."""

    loaders: Loaders
    request: Request | WebSocket | None = None  # None when the schema is run directly
    # A WebSocket's `connection_init` payload, where its key may come (server.graphql.view).
    connection_params: dict[str, object] | None = None
    min_change: int | None = None
    """The change (a sequence number of the log) the operation's answer must reflect at least:
    the larger of what the request asked (`Almanac-Min-Change`, `extensions.minChange`) and
    the caller's own last change in this process; this process has applied it (the gate waited
    for it: server.graphql.admission). None: any answer is fresh enough."""
    changes: ChangeReceipt = field(default_factory=ChangeReceipt)
    """The changes the request's operations wrote (a mutation's, noted by the store in the
    write's transaction): the newest is its `Almanac-Change-Cursor`, and an operation's own
    `changeCursor` if it moved while the operation ran (server.graphql.view)."""

    @property
    def connection(self) -> Request | WebSocket:
        """The request or the WebSocket the operation came by: a transport's context has one."""
        if self.request is None:
            raise RuntimeError("The schema was run directly: its context has no connection.")
        return self.request

    def forget_loaded(self) -> None:
        """Drop what the loaders hold, after a write changed it."""
        self.loaders = Loaders(self.store)


def new_context(
    store: Store, request: Request | WebSocket | None = None, identity: Identity | None = None
) -> Context:
    read: set[str] = set()
    noted = noting_reads(store, read)
    return Context(
        store=noted, loaders=Loaders(noted), request=request, identity=identity, read=read
    )
