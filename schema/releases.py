"""Releases in GraphQL, and the leaderboards a release is made of, computed by the schema's own
types (the page's rules: best score per model, the order, the ranks, the tracked flags, the
intervals and who reported each score)."""

from typing import Any

from releases import ReadLeaderboards, StoredRelease, make_release
from schema.benchmark import Benchmark, benchmarks_from_docs
from schema.changes import encode_change_cursor
from schema.context import new_context
from schema.extensions.metering import LIST_SIZES
from schema.leaderboard import LeaderboardRow
from store import Store


def leaderboard_reader(store: Store) -> ReadLeaderboards:
    """A release's leaderboards, as the `LEADERBOARD` query answers them (every row a read can
    hold), from the `Benchmark` objects the query would resolve, without GraphQL's execution:
    a leaderboard of 100 rows is some 1,700 fields, 50 ms executed, 8 minutes for 10,000
    (the equality is tested against the download, which runs the query)."""

    async def read(slugs: list[str]) -> dict[str, dict[str, Any]]:
        context = new_context(store)
        docs = await store.benchmarks_by_slugs(slugs)
        return {
            benchmark.slug: _answer(benchmark)
            for benchmark in await benchmarks_from_docs(context, docs, stored=True)
        }

    return read


def _answer(benchmark: Benchmark) -> dict[str, Any]:
    metric = benchmark.doc["metric"]
    rows = benchmark.leaderboard(first=LIST_SIZES.max_slice)
    return {
        "slug": benchmark.slug,
        "name": benchmark.name,
        "scoresRefreshedOn": benchmark.scores_refreshed_on,
        "metric": {
            "name": metric["name"],
            "unit": metric["unit"],
            "higherIsBetter": metric["higher_is_better"],
        },
        "leaderboard": [_row(row) for row in rows],
    }


def _row(row: LeaderboardRow) -> dict[str, Any]:
    interval, ranks, kind = row.interval(), row.rank_range(), row.reported_by()
    return {
        "rank": row.rank,
        "modelName": row.model_name,
        "listedAs": row.listed_as,
        "tracked": row.tracked,
        "score": row.score,
        "setting": row.setting,
        "source": row.source,
        "publishedOn": row.published_on,
        "note": row.note,
        "interval": None
        if interval is None
        else {
            "low": interval.low,
            "high": interval.high,
            "level": interval.level,
            "computed": interval.computed,
        },
        "standardError": row.standard_error,
        "sampleSize": row.sample_size,
        "rankRange": {"best": ranks.best, "worst": ranks.worst},
        "reportedBy": None if kind is None else kind.name,
        "selfReported": row.self_reported(),
        "releasedAfterTestSet": row.released_after_test_set(),
    }


async def create_release(store: Store, title: str) -> tuple[StoredRelease, bool]:
    """The almanac released now under `title` (releases.make_release), its leaderboards as the
    schema computes them, its cursor as the change feed gives them out."""
    return await make_release(store, title, leaderboard_reader(store), encode_change_cursor)
