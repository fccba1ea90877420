"""The root Query: every way into the almanac's data."""

import strawberry
from strawberry import relay

from api_errors import ApiError, shown
from editing import MAX_CATEGORIES
from resolvers import BenchmarkOrder, sort_models
from schema.context import Context
from schema.releases import ReleaseArgument, ReleaseQueries, released_page
from schema.types import (
    LEADER_FIELDS,
    SIBLINGS_WITH_A_BENCHMARK,
    Benchmark,
    Category,
    Change,
    ChangeConnection,
    ChangeFilterInput,
    Model,
    RateLimit,
    benchmark_page,
    benchmarks_from_summaries,
    change_feed,
    rate_limit,
    rows_select,
    siblings_shown,
)
from schema.vocabulary import (
    MAX_PAGE_SIZE,
    Connection,
    Kind,
    Status,
    at_most,
    connection,
    cursor_connection,
    decode_key_cursor,
    encode_key_cursor,
    page,
    page_of,
    slice_size,
)
from schema.webhooks import WebhookQueries
from store import ORDER_FIELDS, BenchmarkFilter, Order, order_key


@strawberry.input(
    name="BenchmarkFilter", description="Narrows `benchmarks`; every field given must match."
)
class BenchmarkFilterInput:
    category: str | None = strawberry.field(default=None, description="A category slug.")
    status: Status | None = strawberry.field(default=None, description="Its status.")
    kind: Kind | None = strawberry.field(default=None, description="Its kind.")
    lab: str | None = strawberry.field(default=None, description="Slug of the lab that made it.")
    search: str | None = strawberry.field(
        default=None, description="Part of the name, ignoring case."
    )

    def to_store_filter(self) -> BenchmarkFilter:
        return BenchmarkFilter(
            category=self.category,
            status=None if self.status is None else self.status.name,
            kind=None if self.kind is None else self.kind.name,
            lab=self.lab,
            name_contains=self.search,
        )


@strawberry.type(description="How much of the labs' published material the almanac has read.")
class ModelCardCoverage:
    launch_posts_read: int = strawberry.field(
        description="Model launch posts whose headline results were read."
    )
    labs_read: int = strawberry.field(description="Labs those launch posts come from.")


@strawberry.type(
    description=(
        "The Benchmark Almanac: AI benchmarks, their leaderboards, and the models we track. "
        "Start from `benchmark(slug:)` for one page, `benchmarks` for the catalog, or `model`."
    )
)
class Query(WebhookQueries, ReleaseQueries):
    rate_limit: RateLimit | None = strawberry.field(
        resolver=rate_limit,
        description="What this request costs and what is left of your budget (GitHub's shape).",
    )

    @strawberry.field(description="A benchmark by its slug; null if there is none.")
    async def benchmark(
        self, info: strawberry.Info[Context], slug: str, release: ReleaseArgument = None
    ) -> Benchmark | None:
        if release is not None:
            return await released_page(info.context, slug, release)
        return await benchmark_page(
            info.context, slug, siblings_shown(info, SIBLINGS_WITH_A_BENCHMARK)
        )

    @strawberry.field(
        directives=[page_of()], description="Benchmarks, filtered and ordered, a page at a time."
    )
    async def benchmarks(
        self,
        info: strawberry.Info[Context],
        first: int = 20,
        after: str | None = None,
        filter: BenchmarkFilterInput | None = None,
        order_by: BenchmarkOrder = BenchmarkOrder.PROMINENCE,
    ) -> Connection[Benchmark]:
        size = slice_size("first", first, MAX_PAGE_SIZE)
        order: Order = order_by.value  # BenchmarkOrder's values are the store's orders
        key = None if after is None else decode_key_cursor(after, order, len(ORDER_FIELDS[order]))
        where = filter.to_store_filter() if filter else BenchmarkFilter()
        # One more than asked for says whether a next page exists.
        docs, total = await info.context.store.benchmark_page(where, order, key, size + 1)
        shown = docs[:size]
        return cursor_connection(
            await benchmarks_from_summaries(
                info.context, shown, with_leaders=rows_select(info, LEADER_FIELDS)
            ),
            [encode_key_cursor(order, order_key(doc, order)) for doc in shown],
            has_next_page=len(docs) > size,
            has_previous_page=after is not None,
            total_count=total,
        )

    @strawberry.field(
        directives=[at_most(MAX_CATEGORIES)],
        description="Every category, by slug, with how many benchmarks it holds.",
    )
    async def categories(self, info: strawberry.Info[Context]) -> list[Category]:
        return [Category.from_doc(doc) for doc in await info.context.store.categories()]

    @strawberry.field(description="A model we track, by its slug; null if there is none.")
    async def model(self, info: strawberry.Info[Context], slug: str) -> Model | None:
        return Model.from_optional_doc(await info.context.loaders.model_by_slug.load(slug))

    @strawberry.field(
        directives=[page_of()], description="The models we track, by name, a page at a time."
    )
    async def models(
        self, info: strawberry.Info[Context], first: int = 20, after: str | None = None
    ) -> Connection[Model]:
        at = page(first, after)
        every = sort_models(await info.context.store.models())
        return connection(
            [Model.from_doc(doc) for doc in at.of(every)], at=at, total_count=len(every)
        )

    @strawberry.field(
        description="Any object with a global `id` (a Benchmark or a Model); null if unknown."
    )
    async def node(self, info: strawberry.Info[Context], id: strawberry.ID) -> relay.Node | None:
        try:
            global_id = relay.GlobalID.from_id(id)
        except ValueError as error:
            raise ApiError(f"`id` is not a global ID this API gave out: {shown(id)}.") from error
        node_type = NODE_TYPES.get(global_id.type_name)
        if node_type is None:
            return None
        found = await node_type.resolve_nodes(info=info, node_ids=[global_id.node_id])
        return found[0]

    @strawberry.field(
        directives=[page_of("first", "last")],
        description=(
            "Every change to the almanac's data, oldest first, a page at a time: to keep a copy "
            "current, page through from a cursor (`after`; the start of what is kept without "
            "one), then ask again from the last page's `endCursor`. `last` gives the newest "
            "changes instead (still oldest first). Changes are kept for 90 days by default; "
            "/export.ndjson gives a whole copy and the cursor to go on from."
        ),
    )
    async def changes(
        self,
        info: strawberry.Info[Context],
        first: int = 20,
        after: str | None = None,
        filter: ChangeFilterInput | None = None,
        last: int | None = None,
    ) -> ChangeConnection:
        return await change_feed(info.context, first, after, filter, last)

    @strawberry.field(description="Site-wide: how many launch posts and labs have been read.")
    async def model_card_coverage(self, info: strawberry.Info[Context]) -> ModelCardCoverage:
        figures = await info.context.store.site_figures()
        return ModelCardCoverage(
            launch_posts_read=figures["launch_posts_read"], labs_read=figures["labs_read"]
        )


NODE_TYPES: dict[str, type[Benchmark] | type[Model] | type[Change]] = {
    "Benchmark": Benchmark,
    "Model": Model,
    "Change": Change,
}
