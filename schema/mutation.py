"""The root Mutation: the write API. Every field needs an API key with the admin scope.

Each change is one atomic write. Give `expectedRevision` (the `revision` you read) to make it
only if nobody changed the object since; otherwise it fails with CONFLICT and writes nothing.
"""

from collections.abc import Awaitable
from typing import Annotated, Any, TypeVar

import strawberry

from editing import (
    BenchmarkFields,
    CategoryFields,
    DryRunWorkspace,
    Editor,
    InvalidInput,
    LabFields,
    ModelFields,
    Problem,
    ReadFields,
    check_slug,
    parse,
)
from resolvers import changes_by_read, entries_of
from schema.caller import admin_of
from schema.context import Context
from schema.imports import ImportMutations
from schema.releases import ReleaseMutations
from schema.types import Benchmark, Category, Lab, LeaderboardRead, Model, benchmarks_from_docs
from schema.vocabulary import (
    WRITE,
    BenchmarkInput,
    LeaderboardReadInput,
    ModelInput,
    SlugAndNameInput,
    as_plain,
    camel_case,
)
from schema.webhooks import WebhookMutations

T = TypeVar("T")


@strawberry.type(description="The outcome of recording a leaderboard read.")
class RecordReadPayload:
    benchmark: Benchmark = strawberry.field(
        description="The benchmark, as it is now (with `dryRun`: as it would be)."
    )
    before: Benchmark = strawberry.field(
        description=(
            "The benchmark as it was before this read: compare its `leader` and "
            "`trackedLeader` with `benchmark`'s."
        )
    )
    read: LeaderboardRead = strawberry.field(
        description="The read, as recorded (with `dryRun`: as it would be), and what it changes."
    )
    recorded: bool = strawberry.field(
        description=(
            "False when this same read (same day, same rows) was already recorded: "
            "nothing was written, and `read` is the one recorded before."
        )
    )


DryRun = Annotated[
    bool,
    strawberry.argument(
        description=(
            "Check the change and answer with what it would make, writing nothing: the same "
            "refusals, the same answer, no change."
        )
    ),
]
ExpectedRevision = Annotated[
    int | None,
    strawberry.argument(
        description="The revision you read; if the object has moved on, CONFLICT and no change."
    ),
]


@strawberry.type(
    description="Changes to the almanac, each needing an admin API key; and your webhooks, "
    "which any API key may manage."
)
class Mutation(WebhookMutations, ImportMutations, ReleaseMutations):
    @strawberry.mutation(directives=[WRITE], description="Add a benchmark. Its slug is permanent.")
    async def create_benchmark(
        self,
        info: strawberry.Info[Context],
        slug: str,
        input: BenchmarkInput,
        dry_run: DryRun = False,
    ) -> Benchmark:
        editor = _editor(info, dry_run)
        fields = _parse(BenchmarkFields, input, "input")
        doc = await _checked(editor.create_benchmark(check_slug(slug), fields))
        return await _benchmark(info, doc)

    @strawberry.mutation(
        directives=[WRITE], description="Change a benchmark's descriptive data, family or status."
    )
    async def update_benchmark(
        self,
        info: strawberry.Info[Context],
        slug: str,
        input: BenchmarkInput,
        expected_revision: ExpectedRevision = None,
        dry_run: DryRun = False,
    ) -> Benchmark:
        editor = _editor(info, dry_run)
        fields = _parse(BenchmarkFields, input, "input")
        doc = await _checked(editor.update_benchmark(slug, fields, expected_revision))
        return await _benchmark(info, doc)

    @strawberry.mutation(
        directives=[WRITE],
        description=(
            "Record a read of a benchmark's leaderboard: it replaces the current leaderboard "
            "in one atomic change and is kept in the benchmark's history. Recording the same "
            "read again changes nothing and returns the read already recorded."
        ),
    )
    async def record_leaderboard_read(
        self,
        info: strawberry.Info[Context],
        benchmark: str,
        input: LeaderboardReadInput,
        expected_revision: ExpectedRevision = None,
        dry_run: DryRun = False,
    ) -> RecordReadPayload:
        editor = _editor(info, dry_run)
        read = _parse(ReadFields, input, "input")
        outcome = await _checked(editor.record_read(benchmark, read, expected_revision))
        history = outcome.benchmark.get("history", [])
        tracked = await info.context.loaders.tracked_models_of_entries(entries_of(history), {})
        changes = changes_by_read(history, tracked)[history.index(outcome.read)]
        now, before = await benchmarks_from_docs(
            _forgetting(info), [outcome.benchmark, outcome.before]
        )
        return RecordReadPayload(
            benchmark=now,
            before=before,
            read=LeaderboardRead.from_read(outcome.read, changes),
            recorded=outcome.recorded,
        )

    @strawberry.mutation(
        directives=[WRITE], description="Add a model to the list of models we track."
    )
    async def create_model(
        self,
        info: strawberry.Info[Context],
        slug: str,
        input: ModelInput,
        dry_run: DryRun = False,
    ) -> Model:
        editor = _editor(info, dry_run)
        doc = await _checked(
            editor.create_model(check_slug(slug), _parse(ModelFields, input, "input"))
        )
        info.context.forget_loaded()
        return Model.from_doc(doc)

    @strawberry.mutation(
        directives=[WRITE],
        description=(
            "Change a tracked model: its name, aliases, lab, release month or capability-index "
            "rank. Tracked flags and leaders everywhere follow at once."
        ),
    )
    async def update_model(
        self,
        info: strawberry.Info[Context],
        slug: str,
        input: ModelInput,
        expected_revision: ExpectedRevision = None,
        dry_run: DryRun = False,
    ) -> Model:
        editor = _editor(info, dry_run)
        fields = _parse(ModelFields, input, "input")
        doc = await _checked(editor.update_model(slug, fields, expected_revision))
        info.context.forget_loaded()
        return Model.from_doc(doc)

    @strawberry.mutation(
        directives=[WRITE], description="Add a lab that benchmarks and models can name."
    )
    async def create_lab(
        self, info: strawberry.Info[Context], input: SlugAndNameInput, dry_run: DryRun = False
    ) -> Lab:
        doc = await _checked(_editor(info, dry_run).create_lab(_parse(LabFields, input, "input")))
        return Lab(slug=doc["slug"], name=doc["name"])

    @strawberry.mutation(
        directives=[WRITE], description="Add a category that benchmarks can be filed under."
    )
    async def create_category(
        self, info: strawberry.Info[Context], input: SlugAndNameInput, dry_run: DryRun = False
    ) -> Category:
        editor = _editor(info, dry_run)
        doc = await _checked(editor.create_category(_parse(CategoryFields, input, "input")))
        return Category(slug=doc["slug"], name=doc["name"], benchmark_count=0)


def _editor(info: strawberry.Info[Context], dry_run: bool) -> Editor:
    """The caller's editor; the changes it writes noted in the operation's `changes` (a dry
    run writes none)."""
    store, by = info.context.store, admin_of(info.context.identity).name
    if dry_run:
        return Editor(store, by=by, workspace=DryRunWorkspace(store))
    return Editor(store, by=by, receipt=info.context.changes)


def _parse(model: type[T], value: Any, argument: str) -> T:
    try:
        return parse(model, as_plain(value))  # type: ignore[type-var]
    except InvalidInput as error:
        raise _for_graphql(error.within((argument,))) from error


async def _checked(change: Awaitable[T]) -> T:
    try:
        return await change
    except InvalidInput as error:
        # The editor names fields of the input, or the `slug` argument itself.
        about_slug = error.problems[0].location[:1] == ("slug",)
        raise _for_graphql(error if about_slug else error.within(("input",))) from error


def _for_graphql(error: InvalidInput) -> InvalidInput:
    return InvalidInput([Problem(camel_case(p.location), p.message) for p in error.problems])


async def _benchmark(info: strawberry.Info[Context], doc: Any) -> Benchmark:
    return (await benchmarks_from_docs(_forgetting(info), [doc]))[0]


def _forgetting(info: strawberry.Info[Context]) -> Context:
    """The context, its loaders emptied: what they held may have changed."""
    info.context.forget_loaded()
    return info.context
