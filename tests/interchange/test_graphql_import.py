"""`importResults`: a tool's files sent by the GraphQL multipart request spec through the real
app, imported as the CLI imports them; refused whole with BAD_USER_INPUT naming the file and
where in it; an admin key needed."""

import json
from typing import Any

import httpx

from store import Store
from tests.conftest import GraphQLClient, snapshot
from tests.interchange.conftest import LM_EVAL, add_benchmarks

IMPORT = """
mutation Import($files: [Upload!]!, $map: Upload, $dryRun: Boolean! = false) {
  importResults(files: $files, map: $map, dryRun: $dryRun) {
    written
    rowCount
    files { name sha256 tool version scoreCount }
    rows { benchmark change modelName setting before after }
    leaderChanges
  }
}
"""
MODEL = "RylanSchaeffer/mem_Qwen3-93M_minerva_math_rep_0_sbst_1.0000_epch_1_ot_1"


async def multipart(
    client: GraphQLClient, files: dict[str, tuple[str, bytes]], **variables: Any
) -> httpx.Response:
    """The spec's request: `operations`, the `map` of each file to its variable, the files."""
    listed = [name for name in files if name != "map"]
    variables = {**variables, "files": [None] * len(listed)}
    mapping = {name: [f"variables.files.{n}"] for n, name in enumerate(listed)}
    if "map" in files:
        variables["map"] = None
        mapping["map"] = ["variables.map"]
    data = {
        "operations": json.dumps({"query": IMPORT, "variables": variables}),
        "map": json.dumps(mapping),
    }
    return await client.http.post(
        "/graphql",
        data=data,
        files={k: (name, content) for k, (name, content) in files.items()},
        headers=client.headers,
    )


async def test_an_lm_eval_file_sent_as_a_multipart_request(
    admin: GraphQLClient, store: Store
) -> None:
    await add_benchmarks(store)
    sent = {"0": (LM_EVAL.name, LM_EVAL.read_bytes())}
    before = await snapshot(store)
    dry = (await multipart(admin, sent, dryRun=True)).json()
    assert "errors" not in dry, dry
    assert dry["data"]["importResults"]["written"] is False
    assert dry["data"]["importResults"]["rowCount"] == 2
    assert await snapshot(store) == before
    answer = (await multipart(admin, sent)).json()["data"]["importResults"]
    assert answer["written"] is True
    [file] = answer["files"]
    assert file["name"] == LM_EVAL.name
    assert file["tool"] == "lm-evaluation-harness"
    assert file["version"] == "0.4.9.2"
    assert file["scoreCount"] == 2
    assert answer["rows"] == [
        {
            "benchmark": "math-perturbed-full",
            "change": "added",
            "modelName": MODEL,
            "setting": "0-shot",
            "before": None,
            "after": 0.0,
        },
        {
            "benchmark": "math-rephrased-full",
            "change": "added",
            "modelName": MODEL,
            "setting": "0-shot",
            "before": None,
            "after": 0.04,
        },
    ]
    [doc] = await store.benchmarks_by_slugs(["math-rephrased-full"])
    assert (
        doc["entries"][0]["source"]
        == f"lm-evaluation-harness 0.4.9.2: {LM_EVAL.name} (sha256 {file['sha256']})"
    )


async def test_a_bad_file_is_refused_whole(admin: GraphQLClient, store: Store) -> None:
    await add_benchmarks(store)
    before = await snapshot(store)
    cut = {"0": (LM_EVAL.name, LM_EVAL.read_bytes()[:5000])}
    body = (await multipart(admin, cut)).json()
    [error] = body["errors"]
    assert error["extensions"]["code"] == "BAD_USER_INPUT"
    assert error["message"].startswith(f"0/{LM_EVAL.name}, line ")
    assert "not valid JSON" in error["message"]
    assert await snapshot(store) == before


async def test_an_import_needs_an_admin_key(graphql: GraphQLClient, store: Store) -> None:
    body = (await multipart(graphql, {"0": (LM_EVAL.name, LM_EVAL.read_bytes())})).json()
    assert body["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"


async def test_text_sent_where_a_file_goes_is_refused(admin: GraphQLClient, store: Store) -> None:
    """A JSON request naming a file's text as its `files` is not a file: refused, nothing kept."""
    await add_benchmarks(store)
    before = await snapshot(store)
    body = await admin(IMPORT, files=[LM_EVAL.read_text(encoding="utf-8")])
    [error] = body["errors"]
    assert error["message"] == "Send each file by the GraphQL multipart request spec."
    assert error["extensions"]["code"] == "BAD_USER_INPUT"
    assert await snapshot(store) == before
