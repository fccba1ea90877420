"""Names, sources, notes and addresses refuse control characters, bidi overrides and Unicode's
noncharacters with BAD_USER_INPUT naming the field, before anything is trimmed or written; a
benchmark's description may run over several lines. A bad slug says in words what a slug
holds."""

from typing import Any

import httpx
import pytest

from server.api_keys import create_key
from server.app import create_app
from server.settings import Settings
from store import Store
from tests.conftest import GraphQLClient, http_client, snapshot
from tests.http.reads.test_leaderboard_reads import record

CREATE_LAB = """
mutation($input: SlugAndNameInput!) { createLab(input: $input) { slug name } }"""
CREATE_MODEL = """
mutation($slug: String!, $input: ModelInput!) { createModel(slug: $slug, input: $input) { name } }"""
UPDATE_BENCHMARK = """
mutation($slug: String!, $input: BenchmarkInput!) {
  updateBenchmark(slug: $slug, input: $input) { description }
}"""
CREATE_WEBHOOK = """mutation($input: CreateWebhookInput!) {
  createWebhook(input: $input) { webhook { description } } }"""
GENERAL = "code-interpreter-benchmark-general"
HOOK = "http://127.0.0.1:9/hook"  # a literal address: nothing to resolve


def refusal(body: dict[str, Any]) -> tuple[str, str, str]:
    """The one error's code, field and message."""
    [error] = body["errors"]
    extensions = error["extensions"]
    return extensions["code"], extensions["field"], error["message"]


@pytest.mark.parametrize(
    ("field", "value", "position", "code_point"),
    [
        ("modelName", "Qwen\x1b[31m", 5, "U+001B"),
        ("modelName", "\r=1+1", 1, "U+000D"),  # refused, not trimmed to a formula
        ("setting", "v1\x00", 3, "U+0000"),
        ("source", "paper\u202etxt.exe", 6, "U+202E"),
        ("note", "first line\nsecond", 11, "U+000A"),
        ("note", "\x85", 1, "U+0085"),
        ("source", "\u2066isolated", 1, "U+2066"),
    ],
)
async def test_a_read_refuses_control_characters_naming_the_field(
    admin: GraphQLClient, store: Store, field: str, value: str, position: int, code_point: str
) -> None:
    before = await snapshot(store)
    entry = {"modelName": "Qwen-14B-Chat", "score": 60.0, field: value}
    code, where, message = refusal(await record(admin, "2026-11-20", [entry]))
    assert (code, where) == ("BAD_USER_INPUT", f"input.entries[0].{field}")
    assert f"holds the control character {code_point} at position {position}" in message
    assert await snapshot(store) == before


async def test_names_and_addresses_refuse_them_too(admin: GraphQLClient, store: Store) -> None:
    before = await snapshot(store)
    lab = await admin(CREATE_LAB, input={"slug": "acme", "name": "Acme\u202eLabs"})
    assert refusal(lab)[:2] == ("BAD_USER_INPUT", "input.name")
    model = await admin(CREATE_MODEL, slug="acme-1", input={"name": "Acme", "aliases": ["a\tb"]})
    assert refusal(model)[:2] == ("BAD_USER_INPUT", "input.aliases[0]")
    source = {"name": "Paper", "url": "https://example.org/\x1b"}
    benchmark = await admin(UPDATE_BENCHMARK, slug=GENERAL, input={"source": source})
    assert refusal(benchmark)[:2] == ("BAD_USER_INPUT", "input.source.url")
    assert await snapshot(store) == before
    # Spaces around a name are trimmed, as ever.
    data = await admin.data(CREATE_LAB, input={"slug": "acme", "name": "  Acme Labs "})
    assert data["createLab"] == {"slug": "acme", "name": "Acme Labs"}


async def test_a_description_may_hold_line_breaks_but_nothing_else(admin: GraphQLClient) -> None:
    described = await admin.data(
        UPDATE_BENCHMARK, slug=GENERAL, input={"description": "One.\n\nTwo."}
    )
    assert described["updateBenchmark"]["description"] == "One.\n\nTwo."
    refused = await admin(UPDATE_BENCHMARK, slug=GENERAL, input={"description": "One.\r\nTwo."})
    assert refusal(refused)[:2] == ("BAD_USER_INPUT", "input.description")


async def test_a_bad_slug_says_in_words_what_a_slug_holds(admin: GraphQLClient) -> None:
    for body in (
        await admin(CREATE_LAB, input={"slug": "Acme Labs", "name": "Acme"}),
        await admin(CREATE_MODEL, slug="Acme_1", input={"name": "Acme"}),
        await admin(UPDATE_BENCHMARK, slug=GENERAL, input={"category": "tool--use"}),
    ):
        code, _, message = refusal(body)
        assert code == "BAD_USER_INPUT"
        assert "lowercase letters a-z and digits, in words joined by single hyphens" in message
        assert "^[a-z0-9]" not in message


@pytest.mark.parametrize(
    ("value", "position", "code_point"),
    [
        ("Qwen\ufffe", 5, "U+FFFE"),
        ("\uffff", 1, "U+FFFF"),
        ("Q\ufdd0", 2, "U+FDD0"),
        ("Q\ufdef", 2, "U+FDEF"),
        ("Q\U0001fffe", 2, "U+1FFFE"),
        ("Q\U0010ffff", 2, "U+10FFFF"),
    ],
)
async def test_noncharacters_are_refused_with_the_control_characters(
    admin: GraphQLClient,
    store: Store,
    client: httpx.AsyncClient,
    value: str,
    position: int,
    code_point: str,
) -> None:
    """U+FFFE in a name used to be stored, and the Atom feeds answered 500 (XML cannot hold
    it) until 50 newer changes pushed it out."""
    before = await snapshot(store)
    entry = {"modelName": "Qwen-14B-Chat", "score": 60.0, "setting": value}
    code, where, message = refusal(await record(admin, "2026-11-20", [entry]))
    assert (code, where) == ("BAD_USER_INPUT", "input.entries[0].setting")
    assert f"holds the noncharacter {code_point} at position {position}" in message
    lab = await admin(CREATE_LAB, input={"slug": "acme", "name": f"Acme {value}"})
    assert refusal(lab)[:2] == ("BAD_USER_INPUT", "input.name")
    described = await admin(UPDATE_BENCHMARK, slug=GENERAL, input={"description": value})
    assert refusal(described)[:2] == ("BAD_USER_INPUT", "input.description")
    assert await snapshot(store) == before
    assert (await client.get("/changes.atom")).status_code == 200


async def test_characters_next_to_the_noncharacters_are_kept(admin: GraphQLClient) -> None:
    for number, name in enumerate(("\ufdcf", "\ufdf0", "\ufffd", "\U0001fffd", "\U00020000")):
        lab = {"slug": f"acme-{number}", "name": f"Acme {name}"}
        data = await admin.data(CREATE_LAB, input=lab)
        assert data["createLab"]["name"] == f"Acme {name}"
        await admin.data(UPDATE_BENCHMARK, slug=GENERAL, input={"note": name})


@pytest.mark.parametrize("description", ["for ops\ufffe", "for ops\x1b[2J", "two\nlines"])
async def test_a_webhook_description_is_checked_like_the_rest(
    store: Store, description: str
) -> None:
    loopback = Settings(webhook_allow_http=True, webhook_allow_private=True)
    async with http_client(create_app(loopback, store)) as http:
        client = GraphQLClient(http, await create_key(store, "partner", "read"))
        body = await client(CREATE_WEBHOOK, input={"url": HOOK, "description": description})
        code, where, message = refusal(body)
        assert (code, where) == ("BAD_USER_INPUT", "input.description")
        assert message.startswith("input.description: holds the ")
        assert await store.webhooks() == []
        made = await client(CREATE_WEBHOOK, input={"url": HOOK, "description": "for ops"})
        assert "errors" not in made, made
