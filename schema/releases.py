"""Releases in GraphQL (`Query.releases`, `Query.release`, `createRelease`, `deleteRelease`, and
a benchmark's page as a release holds it), and the leaderboards a release is made of, computed
by the schema's own types (the page's rules: best score per model, the order, the ranks, the
tracked flags, the intervals and who reported each score)."""

from datetime import UTC, datetime
from typing import Annotated, Any, Self

import strawberry

from api_errors import ApiError, ErrorCode
from editing import BenchmarkFields, DryRunWorkspace, Editor, ReadFields, parse
from releases import (
    BoardRules,
    ReadLeaderboards,
    ReleaseFile,
    ReleaseRefused,
    StoredRelease,
    delete_release,
    make_release,
    released_benchmark,
    stored_release,
    stored_releases,
)
from resolvers import index_by_key
from schema.caller import admin_of
from schema.context import Context
from schema.extensions.metering import LIST_SIZES
from schema.types import Benchmark, benchmarks_from_docs
from schema.vocabulary import WRITE, Connection, connection, page, page_of
from store import (
    RELEASES_READ,
    BenchmarkDoc,
    ChangeReceipt,
    Collection,
    DateTime,
    Store,
    encode_change_cursor,
)

INSTANT = "%Y-%m-%dT%H:%M:%SZ"
ReleaseArgument = Annotated[
    strawberry.ID | None,
    strawberry.argument(
        description=(
            "A release's id: the benchmark as that release holds it (its fields, leaderboard "
            "and history; what is around it as it is now); null if the release does not hold "
            "it. A release that is not there, or was deleted, is an error (NOT_FOUND, GONE)."
        )
    ),
]


def leaderboard_reader(store: Store) -> ReadLeaderboards:
    """What a release's leaderboards are made by: each the CSV lines of every row the `LEADERBOARD`
    query can ask for (`first` up to the largest slice), made by the rules the page's types call,
    from the documents and the tracked models, read once a release (the curated list: some hundreds,
    one state of it for every leaderboard). Neither GraphQL's execution (1,700 fields a leaderboard,
    50 ms) nor the types' rows and the answer's dicts (half a release's time): the equality with the
    download, which runs the query, is tested byte for byte."""

    async def read() -> BoardRules:
        return BoardRules(index_by_key(await store.models()), LIST_SIZES.max_slice)

    return read


async def create_release(
    store: Store, title: str, receipt: ChangeReceipt | None = None
) -> tuple[StoredRelease, bool]:
    """The almanac released now under `title` (releases.make_release), its leaderboards as the
    schema computes them, its cursor as the change feed gives them out; the change announcing
    it noted in `receipt` (a mutation's `changeCursor`)."""
    return await make_release(
        store, title, leaderboard_reader(store), encode_change_cursor, receipt=receipt
    )


@strawberry.type(name="ReleaseFile", description="A file of a release: it never changes.")
class ReleaseFileObject:
    name: str = strawberry.field(
        description="Its name in the release: `almanac.ndjson`, `benchmarks/<slug>.csv`, ..."
    )
    size: int = strawberry.field(description="Its size in bytes.")
    sha256: str = strawberry.field(description="The SHA-256 of its bytes, in hex (its ETag).")
    media_type: str = strawberry.field(description="Its media type.")
    url: str = strawberry.field(description="Where it is served: `/releases/<id>/<name>`.")

    @classmethod
    def of(cls, release_id: str, file: ReleaseFile) -> Self:
        return cls(
            name=file.name,
            size=file.size,
            sha256=file.sha256,
            media_type=file.media_type,
            url=f"/releases/{release_id}/{file.name}",
        )


@strawberry.type(description="What a release holds.")
class ReleaseCounts:
    benchmarks: int = strawberry.field(description="Benchmarks.")
    models: int = strawberry.field(description="Tracked models.")
    results: int = strawberry.field(description="Leaderboard rows, over every leaderboard.")


@strawberry.type(description="A deleted release: when and why. Its files answer 410 Gone.")
class ReleaseTombstone:
    deleted_at: DateTime = strawberry.field(description="When it was deleted.")
    reason: str = strawberry.field(description="Why.")


@strawberry.type(
    name="Release",
    description=(
        "The almanac frozen at a change-log position into files that never change, for citing: "
        "the NDJSON export and each leaderboard's CSV, listed in `manifest` (`manifest.json`) "
        "with their sizes and SHA-256. Its id is the data's newest date and the first 12 hex "
        "digits of the manifest's SHA-256: the same data always gets the same id."
    ),
)
class ReleaseObject:
    id: strawberry.ID = strawberry.field(description="`YYYY-MM-DD-` and 12 hex digits.")
    title: str = strawberry.field(description="What it is called where it is cited.")
    created_at: DateTime = strawberry.field(description="When it was made.")
    cursor: str = strawberry.field(
        description="The change feed's cursor it froze: every change up to it is in it."
    )
    counts: ReleaseCounts = strawberry.field(description="What it holds.")
    manifest: ReleaseFileObject = strawberry.field(
        description="`manifest.json`, which lists the files: its SHA-256 names the release."
    )
    deleted: ReleaseTombstone | None = strawberry.field(
        description="When and why it was deleted; null while it stands."
    )
    stored: strawberry.Private[StoredRelease]

    @strawberry.field(
        directives=[page_of()],
        description="Its files in the manifest's order (one a leaderboard), a page at a time.",
    )
    def files(self, first: int = 20, after: str | None = None) -> Connection[ReleaseFileObject]:
        at, files = page(first, after), self.stored.release.files
        shown = [ReleaseFileObject.of(str(self.id), file) for file in at.of(list(files))]
        return connection(shown, at=at, total_count=len(files))

    @classmethod
    def of(cls, stored: StoredRelease) -> Self:
        release, gone = stored.release, stored.deleted
        return cls(
            id=strawberry.ID(release.id),
            title=release.title,
            created_at=_instant(release.created_at),
            cursor=release.cursor,
            counts=ReleaseCounts(
                benchmarks=release.counts.benchmarks,
                models=release.counts.models,
                results=release.counts.results,
            ),
            manifest=ReleaseFileObject.of(release.id, stored.manifest),
            deleted=None
            if gone is None
            else ReleaseTombstone(deleted_at=_instant(gone.at), reason=gone.why),
            stored=stored,
        )


@strawberry.type(description="The outcome of making a release.")
class CreateReleasePayload:
    release: ReleaseObject = strawberry.field(description="The release of the data as it is.")
    created: bool = strawberry.field(
        description="False when this very data was released already: that release, unchanged."
    )


@strawberry.type
class ReleaseQueries:
    @strawberry.field(
        directives=[page_of()],
        description="Every release, newest first (deleted ones with `deleted`), a page at a time.",
    )
    async def releases(
        self, info: strawberry.Info[Context], first: int = 20, after: str | None = None
    ) -> Connection[ReleaseObject]:
        info.context.read.add(RELEASES_READ)
        at, found = page(first, after), await stored_releases(info.context.store)
        shown = [ReleaseObject.of(stored) for stored in at.of(found)]
        return connection(shown, at=at, total_count=len(found))

    @strawberry.field(description="A release by its id; null if there is none.")
    async def release(
        self, info: strawberry.Info[Context], id: strawberry.ID
    ) -> ReleaseObject | None:
        info.context.read.add(RELEASES_READ)
        stored = await stored_release(info.context.store, id)
        return None if stored is None else ReleaseObject.of(stored)


@strawberry.type
class ReleaseMutations:
    @strawberry.mutation(
        directives=[WRITE],
        description=(
            "Freeze the almanac as it is now into a release (admin). Releasing the same data "
            "again answers the release made, with `created: false`."
        ),
    )
    async def create_release(
        self, info: strawberry.Info[Context], title: str
    ) -> CreateReleasePayload:
        admin_of(info.context.identity)
        try:
            stored, made = await create_release(info.context.store, title, info.context.changes)
        except ReleaseRefused as refusal:
            raise ApiError(str(refusal)) from None
        return CreateReleasePayload(release=ReleaseObject.of(stored), created=made)

    @strawberry.mutation(
        directives=[WRITE],
        description=(
            "Delete a release's files (admin): its id then answers 410 Gone, saying when and "
            "`reason`; the release stays listed with `deleted`."
        ),
    )
    async def delete_release(
        self, info: strawberry.Info[Context], id: strawberry.ID, reason: str
    ) -> ReleaseObject:
        by = admin_of(info.context.identity).name
        try:
            buried = await delete_release(
                info.context.store, id, reason, by, receipt=info.context.changes
            )
        except ReleaseRefused as refusal:
            raise ApiError(str(refusal)) from None
        return ReleaseObject.of(buried)


class _AsReleased(DryRunWorkspace):
    """The store as it is, every benchmark absent and nothing written: a release's benchmark
    replayed into it is made as an import of the release into an empty almanac makes it."""

    async def load(self, collection: Collection, slug: str) -> Any | None:
        if collection == Collection.BENCHMARKS:
            return None
        return await super().load(collection, slug)


async def released_page(context: Context, slug: str, release_id: str) -> Benchmark | None:
    """The benchmark `slug` as the release holds it (its fields, its leaderboard and history,
    replayed from the release's NDJSON through the one write path, writing nothing); what is
    around it (family, siblings, tracked models) as it is now. Null if the release does not
    hold it; an error naming the release if there is none, or it was deleted."""
    context.read.add(RELEASES_READ)
    stored = await stored_release(context.store, release_id)
    if stored is None:
        raise ApiError(f"There is no release {release_id!r}.", code=ErrorCode.NOT_FOUND)
    if (gone := stored.deleted) is not None:
        raise ApiError(
            f"Release {release_id} was deleted on {gone.at.isoformat()}: {gone.why}",
            code=ErrorCode.GONE,
            details={"deletedAt": _instant(gone.at), "reason": gone.why},
        )
    item = await released_benchmark(context.store, stored, slug)
    if item is None:
        return None
    fields = {key: value for key, value in item.items() if key not in ("slug", "reads")}
    # The history replayed as it was recorded: a read that dropped rows did so then.
    reads = [parse(ReadFields, {**read, "allow_removals": True}) for read in item["reads"]]
    editor = Editor(
        context.store,
        "release",
        clock=lambda: stored.release.created_at,
        workspace=_AsReleased(context.store),
    )
    doc: BenchmarkDoc
    doc, _ = await editor.put_benchmark(slug, parse(BenchmarkFields, fields), reads)
    return (await benchmarks_from_docs(context, [doc]))[0]


def _instant(at: datetime) -> DateTime:
    return DateTime(at.astimezone(UTC).strftime(INSTANT))
