"""The Every Eval Ever schemas the almanac checks records against are the published ones: the
`every-eval-ever` wheels are downloaded from PyPI here (the package needs Python 3.12, so it is
not installed), their schema files compared byte for byte with interchange/schemas, and every
record the almanac exports checked against the schema read from the 0.3.0 wheel."""

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from jsonschema import Draft7Validator

from interchange import eee_lines
from store import Store
from tests.interchange.test_eee_export import with_tool_results

SCHEMAS = Path(__file__).parents[2] / "interchange" / "schemas"
IN_WHEEL = "every_eval_ever/schemas/eval.schema.json"
WHEELS = {"0.3.0": "0.3.0", "0.2.2": "0.2.3rc1"}
"""Each schema version copied, and the release on PyPI whose wheel carries it."""


def wheel_schema(cache: Path, release: str) -> bytes:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--python-version",
            "3.12",
            "--only-binary=:all:",
            f"every-eval-ever=={release}",
            "-d",
            str(cache),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    [wheel] = cache.glob(f"every_eval_ever-{release}-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        return archive.read(IN_WHEEL)


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    cache = tmp_path_factory.mktemp("wheels")
    return {version: wheel_schema(cache, release) for version, release in WHEELS.items()}


def test_the_schemas_are_the_published_ones(published: dict[str, bytes]) -> None:
    for version, schema in published.items():
        assert (SCHEMAS / f"eval-{version}.schema.json").read_bytes() == schema, version
        assert json.loads(schema)["version"] == version


async def test_every_exported_record_is_valid_against_the_published_schema(
    store: Store, tmp_path: Path, published: dict[str, bytes]
) -> None:
    await with_tool_results(store, tmp_path)
    validator = Draft7Validator(json.loads(published["0.3.0"]))
    records = [json.loads(line) async for line in eee_lines(store)]
    assert len(records) > 50
    for record in records:
        assert [error.message for error in validator.iter_errors(record)] == [], record
