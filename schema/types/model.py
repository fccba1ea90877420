"""The Model type: a model we track, and its results across benchmarks."""

from collections.abc import Iterable
from typing import TYPE_CHECKING, Annotated, Self

import strawberry
from strawberry import relay

from schema.context import Context
from schema.types.lab import Lab
from schema.vocabulary import (
    Connection,
    Revised,
    SliceArgument,
    SlugNode,
    StoredFields,
    connection,
    global_id,
    node_id,
    page,
    page_of,
    slice_size,
    sliced_by,
)
from store import BenchmarkDoc, ModelDoc, YearMonth

if TYPE_CHECKING:
    from schema.types.standing import ModelResult

# A model's standings name benchmarks, whose rows name models: the type is named lazily, and
# its results built with an import at call time (schema.types.standing).
Standing = Annotated["ModelResult", strawberry.lazy("schema.types.standing")]

DEFAULT_RESULTS = 50


@strawberry.type(
    description=(
        "A model on the almanac's curated list of models we track. Leaderboards spell model "
        "names their own way; `aliases` lists the spellings that map to this model."
    )
)
class Model(SlugNode, Revised):
    id: relay.GlobalID = node_id()
    slug: str = strawberry.field(description="Stable URL slug; never reused.")

    name: str = strawberry.field(description="The almanac's name for it, e.g. `Qwen-14B`.")
    aliases: list[str] = strawberry.field(
        description="Other names leaderboards use for it; matched ignoring case and spaces."
    )
    lab: Lab | None = strawberry.field(description="The lab that made it.")
    released_on: YearMonth | None = strawberry.field(description="Release month.")
    capability_index_rank: int | None = strawberry.field(
        description="Its rank on the almanac's capability index (1 is strongest), if ranked."
    )

    doc: strawberry.Private[ModelDoc]

    @classmethod
    def from_doc(cls, doc: ModelDoc) -> Self:
        return cls(**MODEL_FIELDS.of(doc), id=global_id("Model", doc["slug"]), doc=doc)

    @classmethod
    def from_optional_doc(cls, doc: ModelDoc | None) -> Self | None:
        return None if doc is None else cls.from_doc(doc)

    @classmethod
    async def resolve_nodes(  # type: ignore[override]
        cls, *, info: strawberry.Info[Context], node_ids: Iterable[str], required: bool = False
    ) -> list[Self | None]:
        docs = await info.context.loaders.model_by_slug.load_many(list(node_ids))
        return [cls.from_optional_doc(doc) for doc in docs]

    @strawberry.field(
        directives=[page_of()],
        description=(
            "Its result on every benchmark whose leaderboard lists it (under its name or an "
            "alias), best place first (then by the benchmark's name), a page at a time."
        ),
    )
    async def standings(
        self, info: strawberry.Info[Context], first: int = 20, after: str | None = None
    ) -> Connection[Standing]:
        at = page(first, after)
        # The store keeps each tracked model's place on every leaderboard: it reads this page.
        docs, total = await info.context.store.model_results(self.slug, at.offset, at.size)
        return connection(await self._results(info, docs), at=at, total_count=total)

    @strawberry.field(
        directives=[sliced_by("first")],
        description=(
            "Its result on every benchmark whose leaderboard lists it (under its name or an "
            "alias), best place first: the first `first` (50 unless asked otherwise)."
        ),
        deprecation_reason=(
            "Use `standings`: the same results, a page at a time, with a total and cursors."
        ),
    )
    async def results(
        self, info: strawberry.Info[Context], first: SliceArgument = DEFAULT_RESULTS
    ) -> list[Standing]:
        docs, _ = await info.context.store.model_results(self.slug, 0, slice_size("first", first))
        return await self._results(info, docs)

    async def _results(
        self, info: strawberry.Info[Context], docs: list[BenchmarkDoc]
    ) -> list["ModelResult"]:
        from schema.types.standing import model_results

        return await model_results(info.context, self.slug, docs)


MODEL_FIELDS = StoredFields(Model, ModelDoc)
