"""Releases through GraphQL, over the real app: made and deleted by an admin only, listed with
their files' sizes and hashes, and a benchmark's page as a release holds it, unchanged by later
writes. Both stores."""

import hashlib
from typing import Any

import httpx

from store import Store, decode_change_cursor
from tests.conftest import GraphQLClient

SLUG = "code-interpreter-benchmark-general"
CREATE = """mutation Make($title: String!) {
  createRelease(title: $title) {
    created
    release {
      id title createdAt cursor
      counts { benchmarks models results }
      files(first: 100) { totalCount nodes { name size sha256 mediaType url } }
      manifest { name size sha256 url }
      deleted { deletedAt reason }
    }
  }
}"""
LIST = "{ releases { nodes { id title deleted { reason } } } }"
PAGE = """query Page($slug: String!, $release: ID) {
  benchmark(slug: $slug, release: $release) {
    name entryCount
    leader { modelName score }
    leaderboard(first: 3) { rank modelName score }
    reads(first: 5) { totalCount nodes { readOn } }
  }
}"""
READ = """mutation Read($slug: String!, $input: LeaderboardReadInput!) {
  recordLeaderboardRead(benchmark: $slug, input: $input) { recorded }
}"""


async def test_an_admin_makes_a_release_anyone_lists_it(
    graphql: GraphQLClient, admin: GraphQLClient, client: httpx.AsyncClient
) -> None:
    assert (await graphql.data(LIST))["releases"]["nodes"] == []
    refused = await graphql(CREATE, title="Anonymous")
    assert refused["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
    made = (await admin.data(CREATE, title="December 2026"))["createRelease"]
    assert made["created"] is True
    release = made["release"]
    assert release["counts"] == {"benchmarks": 11, "models": 8, "results": 57}
    assert release["deleted"] is None
    assert release["files"]["totalCount"] == len(release["files"]["nodes"]) == 13
    for file in [*release["files"]["nodes"], release["manifest"]]:
        served = await client.get(file["url"])
        assert len(served.content) == file["size"]
        assert hashlib.sha256(served.content).hexdigest() == file["sha256"]
    assert release["id"].endswith(release["manifest"]["sha256"][:12])
    again = (await admin.data(CREATE, title="Again"))["createRelease"]
    assert again == {**made, "created": False}
    listed = (await graphql.data(LIST))["releases"]["nodes"]
    assert listed == [{"id": release["id"], "title": "December 2026", "deleted": None}]
    one = await graphql.data(
        "query One($id: ID!) { release(id: $id) { title cursor } }", id=release["id"]
    )
    assert one["release"] == {"title": "December 2026", "cursor": release["cursor"]}
    none = await graphql.data('{ release(id: "2026-01-01-000000000000") { id } }')
    assert none["release"] is None


async def test_a_page_as_a_release_holds_it(graphql: GraphQLClient, admin: GraphQLClient) -> None:
    before = (await graphql.data(PAGE, slug=SLUG))["benchmark"]
    release = (await admin.data(CREATE, title="Before"))["createRelease"]["release"]
    read = {
        "readOn": "2026-11-20",
        "allowRemovals": True,
        "entries": [{"modelName": "Qwen-14B", "score": 99.5}],
    }
    await admin.data(READ, slug=SLUG, input=read)
    now = (await graphql.data(PAGE, slug=SLUG))["benchmark"]
    assert now["leader"] == {"modelName": "Qwen-14B", "score": 99.5}
    held = (await graphql.data(PAGE, slug=SLUG, release=release["id"]))["benchmark"]
    assert held == before
    assert held["leader"] == {"modelName": "GPT-4 (snapshot unspecified)", "score": 82.8}
    missing = await graphql.data(PAGE, slug="no-such-benchmark", release=release["id"])
    assert missing["benchmark"] is None
    unknown = await graphql(PAGE, slug=SLUG, release="2026-01-01-000000000000")
    assert unknown["errors"][0]["extensions"]["code"] == "NOT_FOUND"


async def test_a_deleted_release_is_gone(graphql: GraphQLClient, admin: GraphQLClient) -> None:
    release = (await admin.data(CREATE, title="Soon gone"))["createRelease"]["release"]
    delete = """mutation Delete($id: ID!) {
      deleteRelease(id: $id, reason: "a misread score") { id deleted { reason } }
    }"""
    refused = await graphql(delete, id=release["id"])
    assert refused["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
    deleted = (await admin.data(delete, id=release["id"]))["deleteRelease"]
    assert deleted == {"id": release["id"], "deleted": {"reason": "a misread score"}}
    listed = (await graphql.data(LIST))["releases"]["nodes"]
    assert listed[0]["deleted"] == {"reason": "a misread score"}
    gone = await graphql(PAGE, slug=SLUG, release=release["id"])
    [error] = gone["errors"]
    assert error["extensions"]["code"] == "GONE"
    assert error["extensions"]["reason"] == "a misread score"
    twice = await admin(delete, id=release["id"])
    assert "deleted already" in twice["errors"][0]["message"]


async def test_making_and_deleting_a_release_answer_with_its_changes_cursor(
    admin: GraphQLClient, client: httpx.AsyncClient, store: Store
) -> None:
    """Like every mutation's (issue 30): `extensions.changeCursor` and the header name the
    change that announced the release, then the one that buried it; making the same release
    again changes nothing, and names no change."""

    async def posted(query: str, **variables: str) -> tuple[httpx.Response, dict[str, Any]]:
        body = {"query": query, "variables": variables}
        answered = await client.post("/graphql", json=body, headers=admin.headers)
        assert answered.status_code == 200, answered.text
        return answered, answered.json()

    made, answer = await posted(CREATE, title="With its cursor")
    release_id = answer["data"]["createRelease"]["release"]["id"]
    cursor = answer["extensions"]["changeCursor"]
    assert made.headers["almanac-change-cursor"] == cursor
    published = decode_change_cursor(cursor)
    assert published is not None
    [change] = await store.changes_after(published - 1, 1)
    assert (change.sequence, change.kind.value) == (published, "release_published")
    assert change.slug == release_id

    again, answer = await posted(CREATE, title="Again")
    assert answer["data"]["createRelease"]["created"] is False
    assert "almanac-change-cursor" not in again.headers
    assert "changeCursor" not in answer.get("extensions", {})

    delete = """mutation Delete($id: ID!) {
      deleteRelease(id: $id, reason: "a misread score") { id }
    }"""
    deleted, answer = await posted(delete, id=release_id)
    cursor = answer["extensions"]["changeCursor"]
    assert deleted.headers["almanac-change-cursor"] == cursor
    buried = decode_change_cursor(cursor)
    assert buried is not None
    assert buried > published
    [change] = await store.changes_after(buried - 1, 1)
    assert (change.sequence, change.kind.value) == (buried, "release_deleted")
    assert (await store.change_bounds())[1] == buried
