"""An answer of the caller's own (its webhooks, their deliveries, its budget) is never another
caller's, nor shared by a cache, wherever the operation selects it: behind fragments, aliases,
in another operation of the document, in a batch; over POST and GET."""

from typing import Any

import httpx
import pytest
from graphql import DocumentNode, GraphQLSchema, build_schema, parse

from request_limits import BucketPolicy, selected_operation
from schema import published_types, schema
from schema.caller import PER_CALLER, callers_fields, per_caller, selects_callers_own
from schema.extensions import answer_reuse
from server.api_keys import create_key
from server.settings import Settings
from store import Store
from tests.conftest import GraphQLClient

LOOPBACK = {"webhook_allow_http": True, "webhook_allow_private": True}
CREATE = """mutation($url: String!) {
  createWebhook(input: {url: $url}) { webhook { id } } }"""
ALPHA_URL, BETA_URL = "http://127.0.0.1:9/alpha", "http://127.0.0.2:9/beta"
ALPHA_BUDGET = BucketPolicy(capacity=7_000, restore_rate=10)

WEBHOOKS = {
    "an inline fragment": "{ ... on Query { webhooks { nodes { url deliveries { id } } } } }",
    "an alias": "{ mine: webhooks { nodes { url } } }",
    "a named fragment": "query { ...Mine } fragment Mine on Query { webhooks { nodes { url } } }",
    "a fragment in a fragment beside another field": (
        "{ categories { slug } ...Outer } fragment Outer on Query { ...Inner } "
        "fragment Inner on Query { webhooks { totalCount edges { node { url } } } }"
    ),
    "a fragment on the connection": (
        "{ webhooks { ...Listed } } fragment Listed on WebhookConnection { nodes { url } }"
    ),
}
RATE_LIMITS = {
    "an inline fragment": "{ categories { slug } ... on Query { rateLimit { limit } } }",
    "a named fragment": "{ ...Budget } fragment Budget on Query { budget: rateLimit { limit } }",
}


@pytest.fixture
def settings() -> Settings:
    return Settings(**LOOPBACK)  # type: ignore[arg-type]


@pytest.fixture
async def callers(graphql: GraphQLClient, store: Store) -> dict[str, GraphQLClient]:
    """Two read keys, each with a webhook of its own (alpha with a budget of its own too), and
    an anonymous caller."""
    alpha = graphql.with_key(await create_key(store, "alpha", "read", ALPHA_BUDGET))
    beta = graphql.with_key(await create_key(store, "beta", "read"))
    await alpha.data(CREATE, url=ALPHA_URL)
    await beta.data(CREATE, url=BETA_URL)
    return {"alpha": alpha, "beta": beta, "anonymous": graphql}


async def sent(caller: GraphQLClient, method: str, body: Any) -> httpx.Response:
    if method == "GET":
        return await caller.http.get("/graphql", params=body, headers=caller.headers)
    return await caller.http.post("/graphql", json=body, headers=caller.headers)


@pytest.mark.parametrize("method", ["POST", "GET"])
@pytest.mark.parametrize("query", WEBHOOKS.values(), ids=WEBHOOKS.keys())
async def test_webhooks_are_only_their_owners(
    callers: dict[str, GraphQLClient], method: str, query: str
) -> None:
    answers = {
        name: await sent(caller, method, {"query": query}) for name, caller in callers.items()
    }
    assert ALPHA_URL in answers["alpha"].text
    assert BETA_URL not in answers["alpha"].text
    assert BETA_URL in answers["beta"].text
    assert ALPHA_URL not in answers["beta"].text
    anonymous = answers["anonymous"].json()
    assert anonymous.get("data") is None
    assert anonymous["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
    for answer in answers.values():
        assert "public" not in answer.headers["cache-control"]


@pytest.mark.parametrize("method", ["POST", "GET"])
@pytest.mark.parametrize("query", RATE_LIMITS.values(), ids=RATE_LIMITS.keys())
async def test_a_budget_is_only_its_callers(
    callers: dict[str, GraphQLClient], method: str, query: str
) -> None:
    limits = {}
    for name, caller in callers.items():
        answer = await sent(caller, method, {"query": query})
        assert "public" not in answer.headers["cache-control"]
        [budget] = [v for k, v in answer.json()["data"].items() if k != "categories"]
        limits[name] = budget["limit"]
    assert limits == {"alpha": 7_000, "beta": 20_000, "anonymous": 5_000}


async def test_another_operation_of_the_document_is_its_own_answer(
    callers: dict[str, GraphQLClient],
) -> None:
    document = (
        "query Mine { ...Hooks } query Catalog { categories { slug } } "
        "fragment Hooks on Query { webhooks { nodes { url } } }"
    )
    for name, url in (("alpha", ALPHA_URL), ("beta", BETA_URL)):
        answer = await sent(callers[name], "GET", {"query": document, "operationName": "Mine"})
        assert answer.json()["data"]["webhooks"]["nodes"] == [{"url": url}]
    anonymous = await sent(
        callers["anonymous"], "GET", {"query": document, "operationName": "Catalog"}
    )
    assert anonymous.headers["cache-control"].startswith("public")  # nobody's own: shared


@pytest.mark.parametrize("shape", ["webhooks", "rateLimit"])
async def test_a_batchs_operations_are_each_callers_own(
    callers: dict[str, GraphQLClient], shape: str
) -> None:
    query = (
        WEBHOOKS["an inline fragment"] if shape == "webhooks" else RATE_LIMITS["a named fragment"]
    )
    batch = [{"query": "{ categories { slug } }"}, {"query": query}]
    answers = {name: (await sent(c, "POST", batch)).json() for name, c in callers.items()}
    if shape == "webhooks":
        assert answers["alpha"][1]["data"]["webhooks"]["nodes"][0]["url"] == ALPHA_URL
        assert answers["beta"][1]["data"]["webhooks"]["nodes"][0]["url"] == BETA_URL
        assert answers["anonymous"][1]["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
    else:
        limits = {name: answer[1]["data"]["budget"]["limit"] for name, answer in answers.items()}
        assert limits == {"alpha": 7_000, "beta": 20_000, "anonymous": 5_000}
    # The same operations sent alone afterwards are not answered from the batch's either.
    alone = await sent(callers["beta"], "POST", {"query": query})
    assert ALPHA_URL not in alone.text
    assert '"limit":7000' not in alone.text.replace(" ", "")


async def test_an_answer_with_an_error_is_not_kept(client: httpx.AsyncClient) -> None:
    # Kept, the second would come without its error: a kept answer holds only its data.
    partial = {"query": '{ categories { slug } node(id: "no such id") { id } }'}
    for _ in range(2):
        answer = (await client.post("/graphql", json=partial)).json()
        assert answer["data"] == {"categories": [{"slug": "tool-use"}], "node": None}
        assert answer["errors"][0]["path"] == ["node"]


def test_every_coordinate_marked_is_in_the_schema() -> None:
    own = callers_fields(published_types(schema))
    for coordinate in PER_CALLER:
        type_name, _, field_name = coordinate.partition(".")
        assert any(t == type_name and (not field_name or f == field_name) for t, f in own)
    assert ("Webhook", "deliveries") in own
    assert ("Query", "benchmarks") not in own


@pytest.mark.parametrize(
    ("document", "own"),
    [
        ("{ categories { slug } }", False),
        ("{ __typename categories { __typename } }", False),
        ("{ node(id: 1) { id ... on Benchmark { name } } }", False),
        ("query A { categories { slug } } query B { rateLimit { limit } }", False),
        (
            "{ ...F } fragment F on Query { categories { slug } } fragment G on Query { rateLimit { limit } }",
            False,
        ),
        (
            "{ ...F ...F } fragment F on Query { categories { slug } ...G } fragment G on Query { rateLimit { cost } }",
            True,
        ),
    ],
)
def test_the_walk_follows_the_selected_operation_only(document: str, own: bool) -> None:
    parsed = parse(document)
    operation = selected_operation(parsed, "A" if "query A" in document else None)
    assert selects_callers_own(published_types(schema), parsed, operation) is own


async def test_the_walk_runs_once_a_document_and_operation(
    callers: dict[str, GraphQLClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    walks: list[str | None] = []

    def counted(types: GraphQLSchema, document: DocumentNode, operation: Any) -> bool:
        walks.append(operation.name.value if operation.name else None)
        return selects_callers_own(types, document, operation)

    monkeypatch.setattr(answer_reuse, "selects_callers_own", counted)
    document = "query Mine { webhooks { nodes { url } } } query Catalog { categories { slug } }"
    for name in ("Mine", "Mine", "Catalog", "Mine", "Catalog"):
        for caller in (callers["alpha"], callers["beta"]):
            await sent(caller, "POST", {"query": document, "operationName": name})
    assert walks == ["Mine", "Catalog"]


ABSTRACT_SDL = """
interface Node { id: ID! }
type Webhook implements Node { id: ID! url: String }
type Benchmark implements Node { id: ID! name: String }
union Thing = Webhook | Benchmark
type Query { node: Node thing: Thing benchmarks: [Benchmark] budget: Int }
"""
ABSTRACT = build_schema(ABSTRACT_SDL)


@pytest.mark.parametrize(
    ("document", "own"),
    [
        ("{ node { id } }", True),  # it may be a webhook
        ("{ thing { ... on Benchmark { name } } }", True),
        ("{ benchmarks { id name } }", False),
        ("{ benchmarks { ... on Node { id } } }", True),  # Node.id: of any Node, a webhook's too
        ("{ budget }", True),
    ],
)
def test_a_type_marked_marks_what_may_return_it(
    monkeypatch: pytest.MonkeyPatch, document: str, own: bool
) -> None:
    monkeypatch.setattr(per_caller, "PER_CALLER", frozenset({"Webhook", "Query.budget"}))
    parsed = parse(document)
    assert selects_callers_own(ABSTRACT, parsed, selected_operation(parsed, None)) is own


@pytest.mark.parametrize("coordinate", ["Query.nothing", "Nothing", "Nothing.id"])
def test_a_coordinate_the_schema_lacks_is_refused(
    monkeypatch: pytest.MonkeyPatch, coordinate: str
) -> None:
    monkeypatch.setattr(per_caller, "PER_CALLER", frozenset({"Webhook", coordinate}))
    with pytest.raises(ValueError, match=f"^{coordinate} is not in the schema: update PER_CALLER$"):
        callers_fields(build_schema(ABSTRACT_SDL))
