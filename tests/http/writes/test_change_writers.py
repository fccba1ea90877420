"""Every change says who made it (`Change.recordedBy`): a lab and a category, whose documents
name no writer, as much as a benchmark or a model; through the API and through an import."""

from datetime import UTC, datetime

from editing import Stamp, import_dataset
from editing.dataset import FORMAT
from store import Store
from tests.conftest import GraphQLClient

CHANGES = "{ changes(last: 6) { nodes { kind slug recordedBy } } }"
METRIC = '{name: "Accuracy", unit: PERCENT}'


async def test_every_change_made_through_the_api_names_its_key(admin: GraphQLClient) -> None:
    """`createLab` and `createCategory` used to record null."""
    await admin.data('mutation { createLab(input: {slug: "acme", name: "Acme"}) { slug } }')
    await admin.data('mutation { createCategory(input: {slug: "games", name: "G"}) { slug } }')
    await admin.data(
        f'mutation {{ createBenchmark(slug: "acme-bench", input: {{name: "A", metric: {METRIC},'
        ' category: "games", madeBy: "acme"}) { slug } }'
    )
    await admin.data('mutation { createModel(slug: "acme-1", input: {name: "Acme 1"}) { slug } }')
    changes = (await admin.data(CHANGES))["changes"]["nodes"]
    made = [(c["kind"], c["slug"], c["recordedBy"]) for c in changes if c["slug"] is not None]
    assert made[-4:] == [
        ("LAB_CREATED", "acme", "editor"),
        ("CATEGORY_CREATED", "games", "editor"),
        ("BENCHMARK_CREATED", "acme-bench", "editor"),
        ("MODEL_CREATED", "acme-1", "editor"),
    ]
    dry = 'mutation { createLab(input: {slug: "dry", name: "D"}, dryRun: true) { slug } }'
    await admin.data(dry)
    assert (await admin.data(CHANGES))["changes"]["nodes"] == changes  # nothing written


async def test_an_imported_lab_and_category_name_the_importer(
    admin: GraphQLClient, store: Store
) -> None:
    dataset = {
        "format": FORMAT,
        "labs": [{"slug": "acme", "name": "Acme"}],
        "categories": [{"slug": "games", "name": "Games"}],
    }
    summary = await import_dataset(store, dataset, Stamp(by="cli:ops", at=datetime.now(UTC)))
    assert not summary.rejected
    changes = (await admin.data(CHANGES))["changes"]["nodes"]
    made = [(c["kind"], c["slug"], c["recordedBy"]) for c in changes][-2:]
    assert made == [("LAB_CREATED", "acme", "cli:ops"), ("CATEGORY_CREATED", "games", "cli:ops")]
