"""Releases in GraphQL, and the leaderboards a release is made of, read through the schema (the
page's own query and rules)."""

from typing import Any

import strawberry

from releases import LEADERBOARD, ReadLeaderboard, StoredRelease, make_release
from schema.changes import encode_change_cursor
from schema.context import new_context
from schema.extensions.metering import LIST_SIZES
from store import Store


def leaderboard_reader(store: Store, executor: strawberry.Schema) -> ReadLeaderboard:
    """A release's leaderboards as `executor` (the almanac's schema) answers them: every row a
    read can hold, as the CSV download has them."""

    async def read(slug: str) -> dict[str, Any] | None:
        if (size := await store.leaderboard_size(slug)) is None:
            return None
        variables = {"slug": slug, "first": min(size, LIST_SIZES.max_slice)}
        context = new_context(store)
        result = await executor.execute(
            LEADERBOARD, variable_values=variables, context_value=context
        )
        if result.errors or result.data is None:
            # The document is fixed and its variables checked: only a failure inside ends here.
            raise RuntimeError(f"a release's leaderboard query failed: {result.errors}")
        found: dict[str, Any] | None = result.data["benchmark"]
        return found

    return read


async def create_release(
    store: Store, title: str, executor: strawberry.Schema
) -> tuple[StoredRelease, bool]:
    """The almanac released now under `title` (releases.make_release), its leaderboards as
    `executor` answers them, its cursor as the change feed gives them out."""
    reader = leaderboard_reader(store, executor)
    return await make_release(store, title, reader, encode_change_cursor)
