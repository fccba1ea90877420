"""Curating the models we track: aliases belong to one model, and every figure follows at once."""

from store import Store
from tests.conftest import GraphQLClient, snapshot

GENERAL = "code-interpreter-benchmark-general"

CREATE = """
mutation($slug: String!, $input: ModelInput!) {
  createModel(slug: $slug, input: $input) {
    slug name aliases lab { slug } releasedOn capabilityIndexRank revision updatedBy
  }
}"""
UPDATE = """
mutation($slug: String!, $input: ModelInput!, $expected: Int) {
  updateModel(slug: $slug, input: $input, expectedRevision: $expected) {
    name aliases capabilityIndexRank revision
  }
}"""
PAGE = f"""{{ benchmark(slug: "{GENERAL}") {{
  trackedLeader {{ modelName score }} trackedModelCount strongestModelTested {{ name }}
  lastModelAdded {{ name }} leaderboard {{ modelName tracked }}
}} }}"""


async def test_a_new_model_is_tracked_everywhere_at_once(admin: GraphQLClient) -> None:
    before = (await admin.data(PAGE))["benchmark"]
    assert before["trackedLeader"] == {"modelName": "Qwen-14B", "score": 65.5}
    assert before["trackedModelCount"] == 2

    created = await admin.data(
        CREATE,
        slug="qwen-72b",
        input={
            "name": "Qwen-72B",
            "aliases": ["Qwen-72B-Chat"],
            "lab": "qwen",
            "releasedOn": "2023-11",
            "capabilityIndexRank": 150,
        },
    )
    assert created["createModel"] == {
        "slug": "qwen-72b",
        "name": "Qwen-72B",
        "aliases": ["Qwen-72B-Chat"],
        "lab": {"slug": "qwen"},
        "releasedOn": "2023-11",
        "capabilityIndexRank": 150,
        "revision": 1,
        "updatedBy": "editor",
    }
    after = (await admin.data(PAGE))["benchmark"]
    assert after["trackedLeader"] == {"modelName": "Qwen-72B", "score": 82.8}
    assert after["trackedModelCount"] == 3
    assert after["strongestModelTested"] == {"name": "Qwen-72B"}
    assert after["lastModelAdded"] == {"name": "Qwen-72B"}
    assert {"modelName": "Qwen-72B", "tracked": True} in after["leaderboard"]


async def test_renaming_an_alias_changes_what_is_tracked(admin: GraphQLClient) -> None:
    changed = await admin.data(UPDATE, slug="qwen-14b", input={"aliases": []}, expected=1)
    assert changed["updateModel"] == {
        "name": "Qwen-14B",
        "aliases": [],
        "capabilityIndexRank": 213,
        "revision": 2,
    }
    page = (await admin.data(PAGE))["benchmark"]
    assert page["trackedLeader"] == {"modelName": "ChatGLM3-6B", "score": 62.1}
    assert {"modelName": "Qwen-14B-Chat", "tracked": False} in page["leaderboard"]


RESULTS = '{ model(slug: "%s") { results { benchmark { slug } rank } } }'


async def test_a_models_results_follow_its_aliases_at_once(admin: GraphQLClient) -> None:
    """Results are read in the order of places the store keeps: a change of aliases, or a new
    model, places every model on the leaderboards it touches anew."""
    listed = (await admin.data(RESULTS % "qwen-14b"))["model"]["results"]
    assert len(listed) == 5
    await admin.data(UPDATE, slug="qwen-14b", input={"aliases": []})
    assert (await admin.data(RESULTS % "qwen-14b"))["model"]["results"] == []
    await admin.data(UPDATE, slug="qwen-14b", input={"aliases": ["Qwen-14B-Chat"]})
    assert (await admin.data(RESULTS % "qwen-14b"))["model"]["results"] == listed
    # A new model above it on the general track moves it down one place there.
    await admin.data(
        CREATE, slug="qwen-72b", input={"name": "Qwen-72B", "aliases": ["Qwen-72B-Chat"]}
    )
    moved = {
        r["benchmark"]["slug"]: r["rank"]
        for r in (await admin.data(RESULTS % "qwen-14b"))["model"]["results"]
    }
    before = {r["benchmark"]["slug"]: r["rank"] for r in listed}
    assert moved == before  # untracked rows count toward places as well: nothing moves
    new = (await admin.data(RESULTS % "qwen-72b"))["model"]["results"]
    board = await admin.data(
        f'{{ benchmark(slug: "{GENERAL}") {{ leaderboard {{ modelName rank }} }} }}'
    )
    [place] = [r["rank"] for r in board["benchmark"]["leaderboard"] if r["modelName"] == "Qwen-72B"]
    assert {"benchmark": {"slug": GENERAL}, "rank": place} in new
    assert [r["rank"] for r in new] == sorted(r["rank"] for r in new)


async def test_an_alias_of_another_model_is_refused(admin: GraphQLClient, store: Store) -> None:
    before = await snapshot(store)
    for slug, query, fields in (
        ("qwen-14b", UPDATE, {"aliases": ["Qwen-14B-Chat", " chatglm3-6b "]}),
        ("new-one", CREATE, {"name": "New", "aliases": ["QWEN-14B-CHAT"]}),
        ("new-two", CREATE, {"name": "qwen-14b"}),
    ):
        body = await admin(query, slug=slug, input=fields)
        [error] = body["errors"]
        assert error["extensions"]["code"] == "BAD_USER_INPUT"
        assert "already belongs to model" in error["message"]
        assert error["extensions"]["field"] in (
            "input.aliases[1]",
            "input.aliases[0]",
            "input.name",
        )
    assert await snapshot(store) == before


async def test_other_refusals_name_their_field(admin: GraphQLClient, store: Store) -> None:
    before = await snapshot(store)
    cases = [
        ({"name": "A", "lab": "nobody"}, "input.lab"),
        ({"name": "A", "releasedOn": "2999-12"}, "input.releasedOn"),
        ({"name": "A", "releasedOn": "0001-01"}, "input.releasedOn"),
        ({"name": "A", "capabilityIndexRank": 0}, "input.capabilityIndexRank"),
        ({"name": "A", "capabilityIndexRank": 2_000_000}, "input.capabilityIndexRank"),
        ({"name": "A", "aliases": [f"A{i}" for i in range(51)]}, "input.aliases"),
        ({"name": "A", "aliases": ["B", "b"]}, "input.aliases[1]"),
        ({"aliases": ["B"]}, "input.name"),
    ]
    for fields, field in cases:
        body = await admin(CREATE, slug="a", input=fields)
        assert body["errors"][0]["extensions"]["field"] == field, body
    assert await snapshot(store) == before


async def test_a_stale_model_revision_is_a_conflict(admin: GraphQLClient) -> None:
    await admin.data(UPDATE, slug="qwen-14b", input={"capabilityIndexRank": 200}, expected=1)
    body = await admin(UPDATE, slug="qwen-14b", input={"capabilityIndexRank": 199}, expected=1)
    assert body["errors"][0]["extensions"] == {"currentRevision": 2, "code": "CONFLICT"}
