"""Results out: the almanac as Every Eval Ever 0.3.0 records (one a model per benchmark source,
ids the same for the same data), and the round trip on each store: exported, imported into an
almanac holding the same benchmarks and models but no results, the same leaderboards, intervals
and reporters."""

import json
from pathlib import Path
from typing import Any

from editing import export_dataset, import_dataset
from interchange import ImportOptions, eee_lines, import_tool_files, read_files, record_problem
from store import Collection, Store
from store.mongo import MongoStore
from tests.conftest import empty_store
from tests.interchange.conftest import GLOBAL_MMLU, LM_EVAL, MMLU_PRO, add_benchmarks, stamp
from tests.interchange.test_imports import leave_out_all_but


async def with_tool_results(store: Store, tmp_path: Path) -> None:
    """The bundled almanac, and rows with standard errors, sample sizes, an interval and
    reporters imported from the published files."""
    await add_benchmarks(store)
    mappings = {
        GLOBAL_MMLU: leave_out_all_but(
            tmp_path, GLOBAL_MMLU, {"English": "global-mmlu-lite-english"}
        ),
        MMLU_PRO: leave_out_all_but(tmp_path / "..", MMLU_PRO, {"MMLU-Pro (overall)": "mmlu-pro"}),
    }
    for path in (LM_EVAL, GLOBAL_MMLU, MMLU_PRO):
        options = ImportOptions(map_file=mappings.get(path))
        await import_tool_files(store, read_files([path], None), options, stamp())


async def exported(store: Store) -> list[str]:
    return [line async for line in eee_lines(store)]


async def leaderboards(store: Store) -> dict[str, Any]:
    """Every benchmark's rows (as stored, less the lookup key) and its leaders."""
    boards = {}
    async for batch in store.documents_in_batches(Collection.BENCHMARKS, 10):
        for doc in batch:
            entries = [{k: v for k, v in e.items() if k != "model_key"} for e in doc["entries"]]
            entries.sort(key=lambda entry: json.dumps(entry, sort_keys=True))
            boards[doc["slug"]] = {"entries": entries, "leaders": doc.get("leaders")}
    return boards


async def test_records_valid_one_a_model_per_benchmark_source_with_stable_ids(
    store: Store, tmp_path: Path
) -> None:
    await with_tool_results(store, tmp_path)
    lines = await exported(store)
    records = [json.loads(line) for line in lines]
    assert [record_problem(record) for record in records] == [None] * len(records)
    ids = [record["evaluation_id"] for record in records]
    assert len(set(ids)) == len(ids)
    assert await exported(store) == lines  # the same data, the same records
    expected = set()
    for doc in await store.benchmarks():
        for entry in doc["entries"]:
            named = entry["source"] or (doc["source"]["name"] if doc["source"] else "unknown")
            expected.add((doc["slug"], entry["model_name"], named, entry.get("reported_by") or ""))
    found = {
        (
            record["source_metadata"]["additional_details"]["almanac_benchmark"],
            record["model_info"]["name"],
            record["source_metadata"]["source_name"],
            record["source_metadata"]["additional_details"]["almanac_reported_by"],
        )
        for record in records
    }
    assert found == expected
    [english] = [
        r for r in records if r["evaluation_results"][0]["evaluation_name"].endswith("English")
    ]
    assert english["source_metadata"]["evaluator_relationship"] == "third_party"
    assert english["evaluation_results"][0]["score_details"]["uncertainty"] == {
        "confidence_interval": {"lower": 62.39, "upper": 71.61, "confidence_level": 0.95}
    }
    [math] = [r for r in records if r["evaluation_id"].startswith("almanac/math-rephrased-full/")]
    assert math["evaluation_results"][0]["score_details"]["uncertainty"] == {
        "standard_error": {"value": 0.028281442113},
        "num_samples": 5000,
    }


async def test_round_trip_gives_the_same_leaderboards(
    store: Store, tmp_path: Path, data_dir: Path
) -> None:
    await with_tool_results(store, tmp_path)
    out = tmp_path / "almanac.eee.jsonl"
    out.write_text("".join(await exported(store)))
    # An almanac with the same benchmarks, models, labs and categories, and no results.
    definitions = await export_dataset(store)
    for benchmark in definitions["benchmarks"]:
        benchmark["reads"] = []
    kind = "mongomock" if isinstance(store, MongoStore) else "sqlite"
    empty = await empty_store(kind, data_dir.parent / "second")
    try:
        assert not (await import_dataset(empty, definitions, stamp())).rejected
        assert all(not board["entries"] for board in (await leaderboards(empty)).values())
        files = read_files([out], None)
        report = await import_tool_files(empty, files, ImportOptions(), stamp())
        assert report.written
        assert await leaderboards(empty) == await leaderboards(store)
    finally:
        await empty.close()
