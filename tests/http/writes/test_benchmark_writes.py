"""Creating and changing benchmarks through the API: revisions, conflicts, and refusals that
leave the database exactly as it was."""

import asyncio
from typing import Any

import pytest

from editing.inputs import MAX_CATEGORIES, MAX_TRACKS
from store import Store
from store.queries import Collection
from tests.conftest import GraphQLClient, snapshot

GENERAL = "code-interpreter-benchmark-general"
PARENT = "code-interpreter-benchmark"

CREATE = """
mutation($slug: String!, $input: BenchmarkInput!) {
  createBenchmark(slug: $slug, input: $input) {
    slug name revision updatedBy updatedAt status prominence
    metric { name unit higherIsBetter } madeBy { slug name } category { slug benchmarkCount }
    parent { slug } reads { totalCount } leader { modelName }
  }
}"""
UPDATE = """
mutation($slug: String!, $input: BenchmarkInput!, $expected: Int) {
  updateBenchmark(slug: $slug, input: $input, expectedRevision: $expected) {
    slug name description status ceiling revision updatedBy releasedOn kind
    parent { slug } tracks { slug } siblings { totalCount }
  }
}"""
# The seed creates each benchmark (revision 1), then records its bundled read (revision 2).
SEEDED = 2
NEW = {
    "name": "Tool Bench",
    "metric": {"name": "Accuracy", "unit": "PERCENT"},
    "category": "tool-use",
    "madeBy": "qwen",
}


async def test_a_new_benchmark_starts_at_revision_one(admin: GraphQLClient) -> None:
    created = (await admin.data(CREATE, slug="tool-bench", input=NEW))["createBenchmark"]
    assert created["slug"] == "tool-bench"
    assert created["revision"] == 1
    assert created["updatedBy"] == "editor"
    assert created["updatedAt"].endswith("Z")
    assert created["status"] == "IN_USE"
    assert created["metric"] == {"name": "Accuracy", "unit": "PERCENT", "higherIsBetter": True}
    assert created["madeBy"] == {"slug": "qwen", "name": "Qwen"}
    assert created["category"] == {"slug": "tool-use", "benchmarkCount": 12}
    assert created["reads"] == {"totalCount": 0}
    assert created["leader"] is None

    page = await admin.data('{ benchmark(slug: "tool-bench") { name revision } }')
    assert page == {"benchmark": {"name": "Tool Bench", "revision": 1}}


async def test_an_update_changes_only_the_fields_given(admin: GraphQLClient) -> None:
    changed = await admin.data(
        UPDATE, slug=GENERAL, input={"status": "SATURATED", "ceiling": None}, expected=SEEDED
    )
    benchmark = changed["updateBenchmark"]
    assert benchmark["status"] == "SATURATED"
    assert benchmark["ceiling"] is None, "null clears a field"
    assert benchmark["name"] == "Code Interpreter Benchmark General", "left out, left alone"
    assert benchmark["kind"] == "FUNCTION_CALLING"
    assert (benchmark["revision"], benchmark["updatedBy"]) == (SEEDED + 1, "editor")

    # The same values again change nothing, and the revision stays.
    again = await admin.data(UPDATE, slug=GENERAL, input={"status": "SATURATED"})
    assert again["updateBenchmark"]["revision"] == SEEDED + 1


async def test_parent_and_tracks_follow_a_family_change(admin: GraphQLClient) -> None:
    await admin.data(CREATE, slug="tool-bench", input=NEW)
    moved = await admin.data(
        UPDATE, slug="tool-bench", input={"parent": PARENT, "trackPosition": 5}
    )
    benchmark = moved["updateBenchmark"]
    assert benchmark["parent"] == {"slug": PARENT}
    assert [t["slug"] for t in benchmark["tracks"]][-1] == "tool-bench"
    assert len(benchmark["tracks"]) == 5
    # As a member of the family it is no longer a sibling of its tracks.
    general = await admin.data(
        f'{{ benchmark(slug: "{GENERAL}") {{ siblings {{ totalCount }} tracks {{ slug }} }} }}'
    )
    assert general["benchmark"]["siblings"]["totalCount"] == 6
    assert len(general["benchmark"]["tracks"]) == 5


async def test_a_stale_revision_is_a_conflict_that_changes_nothing(
    admin: GraphQLClient, store: Store
) -> None:
    await admin.data(UPDATE, slug=GENERAL, input={"note": "first"}, expected=SEEDED)
    before = await snapshot(store)
    body = await admin(UPDATE, slug=GENERAL, input={"note": "second"}, expected=SEEDED)
    [error] = body["errors"]
    assert error["extensions"]["code"] == "CONFLICT"
    assert error["extensions"]["currentRevision"] == SEEDED + 1
    assert f"revision {SEEDED + 1}, not the expected {SEEDED}" in error["message"]
    assert await snapshot(store) == before


async def test_of_two_concurrent_writes_at_one_revision_one_wins(
    admin: GraphQLClient, store: Store
) -> None:
    results = await asyncio.gather(
        admin(UPDATE, slug=GENERAL, input={"note": "from Ada"}, expected=SEEDED),
        admin(UPDATE, slug=GENERAL, input={"note": "from Bo"}, expected=SEEDED),
    )
    outcomes = sorted("errors" in body for body in results)
    assert outcomes == [False, True]
    winner = next(body for body in results if "errors" not in body)
    loser = next(body for body in results if "errors" in body)
    assert loser["errors"][0]["extensions"]["code"] == "CONFLICT"
    note = (await admin.data(f'{{ benchmark(slug: "{GENERAL}") {{ note revision }} }}'))[
        "benchmark"
    ]
    assert note["revision"] == SEEDED + 1
    assert winner["data"]["updateBenchmark"]["revision"] == SEEDED + 1
    [doc] = await store.benchmarks_by_slugs([GENERAL])
    assert doc["note"] in ("from Ada", "from Bo")


async def test_without_an_expected_revision_concurrent_writes_both_land(
    admin: GraphQLClient,
) -> None:
    results = await asyncio.gather(
        admin(UPDATE, slug=GENERAL, input={"note": "one"}),
        admin(UPDATE, slug=GENERAL, input={"description": "two"}),
    )
    assert all("errors" not in body for body in results), results
    final = await admin.data(f'{{ benchmark(slug: "{GENERAL}") {{ note description revision }} }}')
    assert final["benchmark"] == {"note": "one", "description": "two", "revision": SEEDED + 2}


async def test_an_unknown_benchmark_is_not_found(admin: GraphQLClient) -> None:
    body = await admin(UPDATE, slug="no-such-thing", input={"note": "x"})
    assert body["errors"][0]["extensions"]["code"] == "NOT_FOUND"


REFUSED_CREATIONS: list[tuple[str, str, dict[str, Any], str]] = [
    ("bad slug", "Bad Slug!", NEW, "slug"),
    ("taken slug", GENERAL, NEW, "slug"),
    ("no name", "x", {k: v for k, v in NEW.items() if k != "name"}, "input.name"),
    ("no metric", "x", {k: v for k, v in NEW.items() if k != "metric"}, "input.metric"),
    ("unknown category", "x", {**NEW, "category": "cooking"}, "input.category"),
    ("unknown lab", "x", {**NEW, "madeBy": "nobody"}, "input.madeBy"),
    ("release month not YYYY-MM", "x", {**NEW, "releasedOn": "2023-13"}, "input.releasedOn"),
    ("release month in the future", "x", {**NEW, "releasedOn": "2999-01"}, "input.releasedOn"),
    ("ceiling over 100%", "x", {**NEW, "ceiling": 101}, "input.ceiling"),
    ("unknown parent", "x", {**NEW, "parent": "nope"}, "input.parent"),
    ("parent is a track", "x", {**NEW, "parent": GENERAL}, "input.parent"),
    (
        "source not a web address",
        "x",
        {**NEW, "source": {"name": "S", "url": "ftp:x"}},
        "input.source.url",
    ),
    ("empty name", "x", {**NEW, "name": "  "}, "input.name"),
]


@pytest.mark.parametrize(
    ("slug", "fields", "field"),
    [case[1:] for case in REFUSED_CREATIONS],
    ids=[case[0] for case in REFUSED_CREATIONS],
)
async def test_a_refused_creation_names_the_field_and_writes_nothing(
    admin: GraphQLClient, store: Store, slug: str, fields: dict[str, Any], field: str
) -> None:
    before = await snapshot(store)
    body = await admin(CREATE, slug=slug, input=fields)
    assert body.get("data") is None  # null, or absent when the variables were refused
    [error] = body["errors"]
    assert error["extensions"]["code"] == "BAD_USER_INPUT", error
    assert error["extensions"].get("field", field) == field, error
    assert await snapshot(store) == before


async def test_a_benchmark_with_tracks_cannot_become_a_track(
    admin: GraphQLClient, store: Store
) -> None:
    await admin.data(CREATE, slug="tool-bench", input=NEW)
    before = await snapshot(store)
    body = await admin(UPDATE, slug=PARENT, input={"parent": "tool-bench"})
    assert body["errors"][0]["extensions"]["field"] == "input.parent"
    assert "has tracks of its own" in body["errors"][0]["message"]
    assert await snapshot(store) == before


async def test_a_metric_change_is_checked_against_the_stored_scores(
    admin: GraphQLClient, store: Store
) -> None:
    # POINTS allow any score, so the metric may move there and back.
    points = {"metric": {"name": "Executable rate", "unit": "POINTS"}}
    assert await admin.data(UPDATE, slug=GENERAL, input=points)
    await admin.data(
        "mutation($input: LeaderboardReadInput!) { recordLeaderboardRead("
        f'benchmark: "{GENERAL}", input: $input) {{ recorded }} }}',
        input={
            "readOn": "2026-11-20",
            "entries": [{"modelName": "A", "score": 250}],
            "allowRemovals": True,
        },
    )
    before = await snapshot(store)
    percent = {"metric": {"name": "Executable rate", "unit": "PERCENT"}}
    body = await admin(UPDATE, slug=GENERAL, input=percent)
    assert body["errors"][0]["extensions"]["field"] == "input.metric.unit"
    assert "250.0 is outside 0-100" in body["errors"][0]["message"]
    assert await snapshot(store) == before


async def test_a_unit_change_is_checked_against_every_score_in_the_history(
    admin: GraphQLClient, store: Store
) -> None:
    points = {"metric": {"name": "Executable rate", "unit": "POINTS"}}
    assert await admin.data(UPDATE, slug=GENERAL, input=points)
    for day, score in (("2026-11-20", 1e308), ("2026-11-21", 50.0)):
        await admin.data(
            "mutation($input: LeaderboardReadInput!) { recordLeaderboardRead("
            f'benchmark: "{GENERAL}", input: $input) {{ recorded }} }}',
            input={
                "readOn": day,
                "entries": [{"modelName": "A", "score": score}],
                "allowRemovals": True,
            },
        )
    before = await snapshot(store)
    # The current leaderboard fits PERCENT; a read in its history does not.
    percent = {"metric": {"name": "Executable rate", "unit": "PERCENT"}}
    body = await admin(UPDATE, slug=GENERAL, input=percent)
    assert body["errors"][0]["extensions"]["field"] == "input.metric.unit"
    assert "1e+308 is outside 0-100" in body["errors"][0]["message"]
    assert await snapshot(store) == before


@pytest.mark.parametrize(
    ("fields", "field", "message_part"),
    [
        ({"releasedOn": "0001-01"}, "input.releasedOn", "before 1900"),
        ({"prominence": -2147483648}, "input.prominence", "greater than or equal to -1000000"),
        ({"prominence": 2147483647}, "input.prominence", "less than or equal to 1000000"),
        (
            {"parent": PARENT, "trackPosition": 21},
            "input.trackPosition",
            "less than or equal to 20",
        ),
    ],
)
async def test_values_out_of_bounds_are_refused(
    admin: GraphQLClient, store: Store, fields: dict[str, Any], field: str, message_part: str
) -> None:
    before = await snapshot(store)
    body = await admin(UPDATE, slug=GENERAL, input=fields)
    assert body["errors"][0]["extensions"]["field"] == field, body
    assert message_part in body["errors"][0]["message"]
    assert await snapshot(store) == before


async def test_negative_zero_is_stored_as_zero(admin: GraphQLClient) -> None:
    body = await admin.data(UPDATE, slug=GENERAL, input={"ceiling": -0.0})
    assert body["updateBenchmark"]["ceiling"] == 0.0
    text = (
        await admin.http.post(
            "/graphql", json={"query": f'{{ benchmark(slug: "{GENERAL}") {{ ceiling }} }}'}
        )
    ).text
    assert '"ceiling":0.0' in text
    assert "-0.0" not in text


async def test_a_family_holds_at_most_max_tracks(admin: GraphQLClient, store: Store) -> None:
    """The bundled family has 4 tracks: 16 more fill it (MAX_TRACKS), the next is refused, and
    a track already in the full family may still be changed."""
    held = len([b for b in await store.benchmarks() if b["parent"] == PARENT])
    for number in range(held + 1, MAX_TRACKS + 1):
        await admin.data(CREATE, slug=f"track-{number}", input={**NEW, "parent": PARENT})
    before = await snapshot(store)
    body = await admin(CREATE, slug="one-too-many", input={**NEW, "parent": PARENT})
    [error] = body["errors"]
    assert error["extensions"]["code"] == "BAD_USER_INPUT"
    assert error["extensions"]["field"] == "input.parent"
    assert f"has {MAX_TRACKS} tracks, the most a family holds" in error["message"]
    assert await snapshot(store) == before
    moved = await admin.data(
        UPDATE, slug=f"track-{MAX_TRACKS}", input={"parent": PARENT, "name": "Last"}
    )
    assert moved["updateBenchmark"]["parent"] == {"slug": PARENT}


CREATE_CATEGORY = """mutation($slug: String!) {
  createCategory(input: {slug: $slug, name: "A category"}) { slug } }"""


async def test_the_almanac_holds_at_most_max_categories(admin: GraphQLClient, store: Store) -> None:
    held = len(await store.known_categories())
    await store.insert_many(
        Collection.CATEGORIES,
        [{"slug": f"filler-{n}", "name": f"Filler {n}"} for n in range(MAX_CATEGORIES - 1 - held)],
    )
    last = await admin.data(CREATE_CATEGORY, slug="the-last-one")
    assert last == {"createCategory": {"slug": "the-last-one"}}
    before = await snapshot(store)
    body = await admin(CREATE_CATEGORY, slug="one-too-many")
    [error] = body["errors"]
    assert error["extensions"]["code"] == "BAD_USER_INPUT"
    assert f"holds {MAX_CATEGORIES} categories, the most it may hold" in error["message"]
    assert await snapshot(store) == before
