"""The change feed: every change to the almanac's data, oldest first, a page at a time, from a
cursor that holds across restarts and processes (the store's change log: store.changes)."""

import re
from collections.abc import Iterable
from enum import Enum
from typing import Self

import strawberry
from strawberry import relay

from api_errors import ApiError, ErrorCode, shown
from resolvers import Board, TrackedModels, leader, leaderboard, read_changes, tracked_leader
from schema.context import Context
from schema.types.benchmark import Benchmark
from schema.types.history import LeaderboardRead
from schema.types.leaderboard import LeaderboardRow
from schema.types.model import Model
from schema.vocabulary import (
    MAX_PAGE_SIZE,
    Edge,
    PageInfo,
    slice_size,
)
from store import (
    PUBLIC_KINDS,
    BenchmarkDoc,
    DateTime,
    EntryDoc,
    ReadDoc,
    decode_change_cursor,
    encode_change_cursor,
    purge_keys,
)
from store import Change as LoggedChange
from store import ChangeFilter as StoreChangeFilter
from store import ChangeKind as StoreChangeKind

SEQUENCE = re.compile(r"[1-9][0-9]{0,17}")
"""A change's number as its id writes it: below 10^18, within a signed 64-bit integer."""


def after_sequence(cursor: str) -> int:
    """The change an `after` cursor names; refused if it is no change cursor of this API."""
    sequence = decode_change_cursor(cursor)
    if sequence is None:
        raise ApiError(f"`after` is not a change cursor this API gave out: {shown(cursor)}.")
    return sequence


@strawberry.enum(name="ChangeKind", description="What a change did.")
class ChangeKind(Enum):
    BENCHMARK_CREATED = strawberry.enum_value(
        StoreChangeKind.BENCHMARK_CREATED.value, description="A benchmark was added."
    )
    BENCHMARK_UPDATED = strawberry.enum_value(
        StoreChangeKind.BENCHMARK_UPDATED.value,
        description="A benchmark's descriptive data, family or status changed.",
    )
    READ_RECORDED = strawberry.enum_value(
        StoreChangeKind.READ_RECORDED.value,
        description="A read of a benchmark's leaderboard was recorded: see `read`.",
    )
    MODEL_CREATED = strawberry.enum_value(
        StoreChangeKind.MODEL_CREATED.value, description="A model was added to those we track."
    )
    MODEL_UPDATED = strawberry.enum_value(
        StoreChangeKind.MODEL_UPDATED.value, description="A tracked model changed."
    )
    LAB_CREATED = strawberry.enum_value(
        StoreChangeKind.LAB_CREATED.value, description="A lab was added."
    )
    CATEGORY_CREATED = strawberry.enum_value(
        StoreChangeKind.CATEGORY_CREATED.value, description="A category was added."
    )
    PLACEMENTS_UPDATED = strawberry.enum_value(
        StoreChangeKind.PLACEMENTS_UPDATED.value,
        description=(
            "Tracked models were placed anew on leaderboards after a model's names changed "
            "(derived from a MODEL_UPDATED or MODEL_CREATED before it; no `subject`)."
        ),
    )
    RELEASE_PUBLISHED = strawberry.enum_value(
        StoreChangeKind.RELEASE_PUBLISHED.value,
        description="A release was made: `slug` is its id (`Query.release`).",
    )
    RELEASE_DELETED = strawberry.enum_value(
        StoreChangeKind.RELEASE_DELETED.value,
        description="A release was deleted: `slug` is its id; its files answer 410 Gone.",
    )


@strawberry.input(
    name="ChangeFilter", description="Narrows the changes; every field given must match."
)
class ChangeFilterInput:
    kinds: list[ChangeKind] | None = strawberry.field(default=None, description="Of these kinds.")
    benchmarks: list[str] | None = strawberry.field(
        default=None, description="Of these benchmarks (slugs)."
    )
    models: list[str] | None = strawberry.field(
        default=None, description="Of these tracked models (slugs)."
    )
    category: str | None = strawberry.field(
        default=None, description="Of the benchmarks of this category (a slug)."
    )

    def to_store_filter(self) -> StoreChangeFilter:
        kinds = PUBLIC_KINDS
        if self.kinds is not None:
            kinds = frozenset(StoreChangeKind[kind.name] for kind in self.kinds)
        return StoreChangeFilter(
            kinds=kinds,
            benchmarks=None if self.benchmarks is None else frozenset(self.benchmarks),
            models=None if self.models is None else frozenset(self.models),
            category=self.category,
        )


ALL_PUBLIC = StoreChangeFilter(kinds=PUBLIC_KINDS)


@strawberry.type(
    name="Change",
    description=(
        "One change to the almanac's data, as the change log recorded it when it was made. "
        "`subject` is the benchmark or model changed as it is now; `read` and the leaders "
        "before and after say what a recorded read changed."
    ),
)
class Change(relay.Node):
    sequence: int = strawberry.field(description="Its place in the log: 1, 2, 3, ... for good.")
    at: DateTime = strawberry.field(description="When it was made.")
    kind: ChangeKind = strawberry.field(description="What it did.")
    slug: str | None = strawberry.field(
        description="The slug of what it changed: a benchmark, model, lab or category."
    )
    revision: int | None = strawberry.field(
        description="The revision the benchmark or model reached with it."
    )
    recorded_by: str | None = strawberry.field(description="Who made it: an API key's name.")
    logged: strawberry.Private[LoggedChange]

    @classmethod
    def resolve_id(cls, root: Self, *, info: strawberry.Info) -> str:
        return str(root.sequence)

    @classmethod
    def from_logged(cls, change: LoggedChange) -> Self:
        return cls(
            sequence=change.sequence,
            at=DateTime(change.at),
            kind=ChangeKind[change.kind.name],
            slug=change.slug,
            revision=change.revision,
            recorded_by=change.by,
            logged=change,
        )

    @classmethod
    async def resolve_nodes(  # type: ignore[override]
        cls, *, info: strawberry.Info[Context], node_ids: Iterable[str], required: bool = False
    ) -> list[Self | None]:
        found: list[Self | None] = []
        for node_id in node_ids:
            # Only a change's own id names it: not "²" (a digit to str.isdigit, not to int),
            # not a number past what the store holds (SQLite and BSON take 64 bits).
            sequence = int(node_id) if SEQUENCE.fullmatch(node_id) else None
            logged = (
                []
                if sequence is None
                else await info.context.store.changes_after(sequence - 1, 1, ALL_PUBLIC)
            )
            hit = logged and logged[0].sequence == sequence
            found.append(cls.from_logged(logged[0]) if hit else None)
        return found

    @strawberry.field(
        description=(
            "The surrogate keys to purge from a cache in front of the API after this change: "
            "GET answers and downloads name what they depend on in `Surrogate-Key` (and "
            "`Cache-Tag`); every one this change may have changed carries one of these."
        )
    )
    def purge_keys(self) -> list[str]:
        return purge_keys(self.logged.subjects)

    @strawberry.field(description="Pass as `after` to continue after this change.")
    def cursor(self) -> str:
        return encode_change_cursor(self.sequence)

    @strawberry.field(description="The benchmark or model it changed, as it is now.")
    async def subject(self, info: strawberry.Info[Context]) -> relay.Node | None:
        if self.slug is None:
            return None
        if self.logged.collection == "benchmarks":
            [benchmark] = await Benchmark.resolve_nodes(info=info, node_ids=[self.slug])
            return benchmark
        if self.logged.collection == "models":
            [model] = await Model.resolve_nodes(info=info, node_ids=[self.slug])
            return model
        return None

    @strawberry.field(description="For READ_RECORDED: the read, and what it changed.")
    async def read(self, info: strawberry.Info[Context]) -> LeaderboardRead | None:
        found = await self._read(info.context)
        if found is None:
            return None
        _, read, previous, tracked = found
        return LeaderboardRead.from_read(read, read_changes(previous, read["entries"], tracked))

    @strawberry.field(description="For READ_RECORDED: the leader before the read.")
    async def leader_before(self, info: strawberry.Info[Context]) -> LeaderboardRow | None:
        return await self._leader(info.context, before=True, tracked_only=False)

    @strawberry.field(description="For READ_RECORDED: the leader the read made.")
    async def leader_after(self, info: strawberry.Info[Context]) -> LeaderboardRow | None:
        return await self._leader(info.context, before=False, tracked_only=False)

    @strawberry.field(description="For READ_RECORDED: the tracked leader before the read.")
    async def tracked_leader_before(self, info: strawberry.Info[Context]) -> LeaderboardRow | None:
        return await self._leader(info.context, before=True, tracked_only=True)

    @strawberry.field(description="For READ_RECORDED: the tracked leader the read made.")
    async def tracked_leader_after(self, info: strawberry.Info[Context]) -> LeaderboardRow | None:
        return await self._leader(info.context, before=False, tracked_only=True)

    async def _read(
        self, context: Context
    ) -> tuple[BenchmarkDoc, ReadDoc, list[EntryDoc], TrackedModels] | None:
        """The benchmark, the read this change recorded, the entries before it, and the
        tracked models they name (as tracked now)."""
        if self.logged.kind is not StoreChangeKind.READ_RECORDED or self.slug is None:
            return None
        doc = await context.loaders.benchmark_by_slug.load(self.slug)
        history = [] if doc is None else doc.get("history", [])
        at = [i for i, read in enumerate(history) if read["revision"] == self.revision]
        if doc is None or not at:
            return None
        read = history[at[0]]
        previous = history[at[0] - 1]["entries"] if at[0] else []
        tracked = await context.loaders.tracked_models_of_entries([*previous, *read["entries"]], {})
        return doc, read, previous, tracked

    async def _leader(
        self, context: Context, *, before: bool, tracked_only: bool
    ) -> LeaderboardRow | None:
        found = await self._read(context)
        if found is None:
            return None
        doc, read, previous, tracked = found
        metric = doc["metric"]
        rows = leaderboard(
            previous if before else read["entries"],
            higher_is_better=metric["higher_is_better"],
            tracked=tracked,
        )
        board = Board(rows, unit=metric["unit"], higher_is_better=metric["higher_is_better"])
        row = tracked_leader(rows) if tracked_only else leader(rows)
        return LeaderboardRow.from_optional_row(row, board, doc)


@strawberry.type(
    name="ChangeConnection",
    description=(
        "A page of the change feed, oldest first. Pass `pageInfo.endCursor` as `after` for the "
        "next page; with no next page yet, keep it and ask again later."
    ),
)
class ChangeConnection:
    nodes: list[Change] = strawberry.field(description="The changes of this page, in order.")
    edges: list[Edge[Change]] = strawberry.field(description="The changes with their cursors.")
    page_info: PageInfo = strawberry.field(description="Where this page sits in the feed.")
    newest_cursor: str = strawberry.field(
        description="The cursor after the newest change: pass it as `after` to follow from now."
    )


async def cursor_place(
    context: Context, after: str | None, *, default: int
) -> tuple[int, int, int]:
    """The sequence number `after` names (`default` if None), and the oldest and newest kept;
    a cursor of no change of this almanac, or from before the oldest kept, is refused."""
    oldest, newest = await context.store.change_bounds()
    sequence = min(default, newest) if after is None else after_sequence(after)
    if sequence > newest:
        raise ApiError(f"`after` names no change of this almanac: {shown(after)}.")
    if after is not None and sequence < oldest - 1:
        raise ApiError(
            "`after` is from before the oldest change still kept: the changes since are no "
            "longer known. Start again from /export.ndjson: its Almanac-Changes-Cursor header "
            "is the cursor to continue from.",
            code=ErrorCode.CURSOR_EXPIRED,
        )
    return sequence, oldest, newest


async def change_feed(
    context: Context,
    first: int,
    after: str | None,
    where: ChangeFilterInput | None,
    last: int | None = None,
) -> ChangeConnection:
    """A page of the change feed: up to `first` changes after the cursor `after` (the start of
    the log kept if None), or the `last` ones (still oldest first). A cursor from before the
    oldest change kept is refused, as the changes after it are no longer known."""
    size = slice_size(
        "first" if last is None else "last", first if last is None else last, MAX_PAGE_SIZE
    )
    sequence, oldest, newest = await cursor_place(context, after, default=0)
    store_filter = ALL_PUBLIC if where is None else where.to_store_filter()
    if last is None:
        logged = await context.store.changes_after(sequence, size + 1, store_filter)
    else:
        newest_first = await context.store.changes_after(
            sequence, size, store_filter, newest_first=True
        )
        logged = newest_first[::-1]
    changes = [Change.from_logged(change) for change in logged[:size]]
    edges = [Edge(cursor=encode_change_cursor(c.sequence), node=c) for c in changes]
    return ChangeConnection(
        nodes=changes,
        edges=edges,
        newest_cursor=encode_change_cursor(newest),
        page_info=PageInfo(
            has_next_page=len(logged) > size,
            has_previous_page=(after is not None and sequence >= oldest)
            or (last is not None and len(logged) == size),
            start_cursor=edges[0].cursor if edges else None,
            # With nothing new, where this page started: the place to ask from again.
            end_cursor=edges[-1].cursor
            if edges
            else encode_change_cursor(max(sequence, oldest - 1)),
        ),
    )
