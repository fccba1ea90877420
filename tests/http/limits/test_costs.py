"""A request is never charged less than the objects it returns, on every list of the schema:
checked on a SYNTHETIC almanac where one model is listed on 2,000 leaderboards."""

from datetime import UTC, datetime

import httpx
import pytest

from bench.synthetic import EVERYWHERE, synthetic_almanac
from editing.changes import Catalog, Stamp, changed_benchmark, with_read
from editing.importer import import_dataset
from editing.inputs import BenchmarkFields, ReadFields, parse
from resolvers.tracking import index_by_key
from server.settings import Settings
from store import Store
from store.queries import Collection
from tests.conftest import GraphQLClient
from tests.request_limits.test_cost import objects_in

BENCHMARKS = 2_000
MODEL = "synthetic-model-0"
assert EVERYWHERE == "Synthetic Model 0"


@pytest.fixture
async def synthetic(store: Store) -> Store:
    """The bundled almanac plus 2,000 synthetic benchmarks, each listing one model."""
    stamp = Stamp(by="test", at=datetime.now(UTC))
    dataset = synthetic_almanac(BENCHMARKS, rows=10, reads=2)
    benchmarks = dataset.pop("benchmarks")
    await import_dataset(store, dataset, stamp)
    catalog = Catalog(
        labs={lab["slug"]: lab for lab in await store.labs()},
        categories={c["slug"]: c for c in await store.known_categories()},
        parents={},
    )
    tracked = index_by_key(await store.models())
    docs = []
    for item in benchmarks:
        given = {k: v for k, v in item.items() if k not in ("slug", "reads")}
        fields = parse(BenchmarkFields, given)
        doc = changed_benchmark(None, item["slug"], fields, catalog, stamp, tracked)
        for read in item["reads"]:
            doc = with_read(doc, parse(ReadFields, read), stamp, tracked)  # type: ignore[arg-type]
        docs.append(doc)
    await store.insert_many(Collection.BENCHMARKS, docs)  # in one batch: quicker than an import
    return store


@pytest.fixture
def settings() -> Settings:
    """A budget that refuses nothing here: these tests are about what each request is charged."""
    # Big answers on mongomock: a deadline far beyond what even a loaded machine needs.
    return Settings(
        anonymous_bucket_capacity=1_000_000, anonymous_restore_rate=1, request_timeout_seconds=120
    )


PAGE = "synthetic-benchmark-1"
QUERIES = {
    "Model.results": f'{{ model(slug: "{MODEL}") {{ results(first: 100) {{ rank benchmark {{ slug }} }} }} }}',
    "Model.standings": f'{{ model(slug: "{MODEL}") {{ standings(first: 100) {{ edges {{ node {{ rank benchmark {{ slug }} }} }} }} }} }}',
    "Model.results default": f'{{ model(slug: "{MODEL}") {{ results {{ rank leads }} }} }}',
    "Query.benchmarks and Benchmark.leaderboard": "{ benchmarks(first: 100) { nodes { slug leaderboard(first: 10) { model { slug } } } } }",
    "Benchmark.leaderboard default": f'{{ benchmark(slug: "{PAGE}") {{ leaderboard {{ modelName model {{ slug }} }} }} }}',
    "Benchmark.leaders and trackedLeaders": f'{{ benchmark(slug: "{PAGE}") {{ leaders(first: 50) {{ rankRange {{ best }} interval {{ low }} }} trackedLeaders {{ model {{ slug }} }} }} }}',
    "Benchmark.scoresOverTime": f'{{ benchmark(slug: "{PAGE}") {{ scoresOverTime(last: 1000) {{ score }} }} }}',
    "LeaderboardRead lists": f'{{ benchmark(slug: "{PAGE}") {{ reads(first: 5) {{ nodes {{ added {{ modelName }} removed {{ modelName }} changed {{ modelName }} }} }} }} }}',
    "Benchmark.siblings": f'{{ benchmark(slug: "{PAGE}") {{ siblings(first: 100) {{ edges {{ node {{ slug }} }} pageInfo {{ hasNextPage }} }} }} }}',
    "Benchmark.tracks and modelCardReports": '{ benchmark(slug: "code-interpreter-benchmark") { tracks { slug } modelCardReports { nodes { score } } parent { slug } } }',
    "Query.categories": "{ categories { slug } }",
    "Query.models": "{ models(first: 100) { nodes { slug lab { slug } } } }",
    "Benchmark page": f'{{ benchmark(slug: "{PAGE}") {{ leader {{ model {{ slug }} }} strongestModelTested {{ slug }} category {{ slug }} }} }}',
}


async def test_the_cost_charged_is_never_less_than_the_objects_returned(
    synthetic: Store, client: httpx.AsyncClient
) -> None:
    for lists, query in QUERIES.items():
        response = await client.post("/graphql", json={"query": query})
        body = response.json()
        assert "errors" not in body, (lists, body["errors"])
        returned = objects_in(body["data"]) - 1  # the `data` object itself is not a result
        charged = body["extensions"]["cost"]["requestedQueryCost"]
        assert returned > 0, lists
        assert charged >= returned, f"{lists}: {returned} objects for {charged} points"


async def test_the_most_listed_model_returns_no_more_results_than_it_pays_for(
    synthetic: Store, client: httpx.AsyncClient
) -> None:
    query = f'{{ model(slug: "{MODEL}") {{ results(first: 100) {{ rank }} }} }}'
    body = (await client.post("/graphql", json={"query": query})).json()
    assert len(body["data"]["model"]["results"]) == 100  # of 2,000
    assert body["extensions"]["cost"]["requestedQueryCost"] == 1 + 100


async def test_only_the_operation_run_is_priced_with_its_own_defaults(
    client: httpx.AsyncClient,
) -> None:
    """Another operation's default for a variable of the same name sets nothing."""
    text = """query Small($n: Int! = 3) { benchmarks(first: $n) { nodes { slug } } }
        query Large($n: Int! = 1) { models(first: $n) { nodes { slug } } }"""
    body = (await client.post("/graphql", json={"query": text, "operationName": "Small"})).json()
    assert len(body["data"]["benchmarks"]["nodes"]) == 3
    assert body["extensions"]["cost"]["requestedQueryCost"] == 1 + 3


async def test_the_last_changes_cost_what_they_return(
    client: httpx.AsyncClient, admin: GraphQLClient
) -> None:
    for i in range(3):
        await admin.data(
            f'mutation {{ createLab(input: {{slug: "l{i}", name: "L{i}"}}) {{ slug }} }}'
        )
    for text in (
        "{ changes(last: 3) { nodes { sequence } } }",
        "{ changes(first: 0, last: 3) { nodes { sequence } } }",
    ):
        body = (await client.post("/graphql", json={"query": text})).json()
        assert len(body["data"]["changes"]["nodes"]) == 3
        assert body["extensions"]["cost"]["requestedQueryCost"] == 1 + 3


async def test_a_count_computed_for_a_day_costs_its_computation(client: httpx.AsyncClient) -> None:
    """`entryCount` counts the leaderboard (10); `entryCount(asOf:)` computes that day's first."""
    slug = "code-interpreter-benchmark-general"
    for argument, cost in (("", 1 + 10), ('(asOf: "2026-01-01")', 1 + 10 + 100)):
        text = f'{{ benchmark(slug: "{slug}") {{ entryCount{argument} }} }}'
        body = (await client.post("/graphql", json={"query": text})).json()
        assert isinstance(body["data"]["benchmark"]["entryCount"], int)
        assert body["extensions"]["cost"]["requestedQueryCost"] == cost
