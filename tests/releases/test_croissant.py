"""A release's Croissant descriptor passes `mlcroissant validate` (no error, no warning), names
every file with its size and SHA-256 where the release serves it, and mlcroissant reads the
release's real files through it: the bundled almanac's NDJSON export and every leaderboard's
CSV, downloaded from the real app (on each store), as a release holds them.
"""

import csv
import hashlib
import io
import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import mlcroissant
import pytest

from releases.citation import bibtex
from releases.croissant import DESCRIPTIONS, LEADERBOARD_COLUMNS, descriptor
from releases.leaderboards import LEADERBOARD_COLUMNS as DOWNLOADED_COLUMNS
from releases.manifest import Release, ReleaseCounts, ReleaseFile

BASE_URL = "https://almanac.example.org"
LICENSE = "https://creativecommons.org/licenses/by/4.0/"
SITE = "Benchmark Almanac"
BUNDLED = Path(__file__).parents[2] / "store" / "data" / "almanac.json"
MLCROISSANT = Path(sys.executable).with_name("mlcroissant")


def bundled_slugs() -> list[str]:
    return [benchmark["slug"] for benchmark in json.loads(BUNDLED.read_text())["benchmarks"]]


def file_of(name: str, data: bytes, media_type: str) -> ReleaseFile:
    return ReleaseFile(name, len(data), hashlib.sha256(data).hexdigest(), media_type)


async def release_of_the_app(client: httpx.AsyncClient, root: Path) -> Release:
    """The bundled almanac as a release holds it, written under `root/releases/{id}/`: the
    NDJSON export and each leaderboard's CSV, downloaded from the real app."""
    contents: dict[str, tuple[bytes, str]] = {}
    export = await client.get("/export.ndjson")
    assert export.status_code == 200, export.text
    contents["almanac.ndjson"] = (export.content, "application/x-ndjson")
    for slug in bundled_slugs():
        download = await client.get(f"/benchmarks/{slug}.csv")
        assert download.status_code == 200, download.text
        contents[f"benchmarks/{slug}.csv"] = (download.content, "text/csv")
    files = tuple(file_of(name, data, kind) for name, (data, kind) in sorted(contents.items()))
    listing = json.dumps([[file.name, file.sha256] for file in files]).encode()
    release = Release(
        id="2026-12-02-" + hashlib.sha256(listing).hexdigest()[:12],
        title="The bundled almanac",
        created_at=datetime(2026, 12, 2, 13, 45, tzinfo=UTC),
        cursor="MTE",
        counts=ReleaseCounts(benchmarks=len(bundled_slugs()), models=20, results=0),
        files=files,
    )
    for name, (data, _) in contents.items():
        path = root / "releases" / release.id / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return release


def written(document: dict[str, Any], folder: Path) -> Path:
    path = folder / "croissant.json"
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False))
    return path


def validate(path: Path) -> subprocess.CompletedProcess[str]:
    """`mlcroissant validate --jsonld FILE`, the published command, in a process of its own."""
    return subprocess.run(
        [str(MLCROISSANT), "validate", "--jsonld", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


async def test_the_descriptor_of_a_real_release_validates_and_reads_its_files_back(
    client: httpx.AsyncClient, tmp_path: Path
) -> None:
    release = await release_of_the_app(client, tmp_path)
    folder = tmp_path / "releases" / release.id
    # The files are served at {base_url}/releases/{id}/{file}: here that is the folder they
    # were written to, so that mlcroissant reads them (and checks their hashes) from disk.
    path = written(descriptor(release, str(tmp_path), LICENSE, SITE), folder)

    checked = validate(path)

    assert checked.returncode == 0, checked.stderr
    assert "Done." in checked.stderr
    assert "warning" not in checked.stderr.lower(), checked.stderr
    dataset = mlcroissant.Dataset(jsonld=str(path))
    rows = [
        record
        for slug in bundled_slugs()
        for record in csv.DictReader(
            io.StringIO((folder / "benchmarks" / f"{slug}.csv").read_text(), newline="")
        )
        for record in [{**record, "benchmark": slug}]
    ]
    read = list(dataset.records("leaderboards"))
    assert len(read) == len(rows) == 57  # 11 rows, 10 on each of 4 tracks, 1 on 6 others
    # Each row comes back typed as its field says: text, floats, the rank range as integers.
    assert sorted(
        (
            text(record["leaderboards/benchmark"]),
            text(record["leaderboards/model"]),
            record["leaderboards/score"],
            record["leaderboards/rank_best"],
            record["leaderboards/rank_worst"],
        )
        for record in read
    ) == sorted(
        (
            row["benchmark"],
            row["model"],
            float(row["score"]),
            int(row["rank_best"]),
            int(row["rank_worst"]),
        )
        for row in rows
    )
    general = sorted(
        (record["leaderboards/rank_best"], record["leaderboards/rank_worst"])
        for record in read
        if text(record["leaderboards/benchmark"]) == "code-interpreter-benchmark-general"
    )
    # 82.8 twice, 74.1 twice, 67.2, then 65.5 three times: the ties share their places.
    assert general[:8] == [(1, 2), (1, 2), (3, 4), (3, 4), (5, 5), (6, 8), (6, 8), (6, 8)]


def text(value: Any) -> str:
    """mlcroissant gives sc:Text as bytes."""
    return value.decode() if isinstance(value, bytes) else str(value)


def test_the_leaderboard_record_set_has_the_downloads_columns() -> None:
    """A release's leaderboard CSV is the `/benchmarks/{slug}.csv` download: the same columns."""
    assert tuple(column.name for column in LEADERBOARD_COLUMNS) == DOWNLOADED_COLUMNS


def a_release(*files: ReleaseFile) -> Release:
    return Release(
        id="2026-12-02-1a2b3c4d5e6f",
        title="Almanac & friends: 100% of {them}",  # synthetic: characters JSON-LD must keep
        created_at=datetime(2026, 12, 2, 13, 45, tzinfo=UTC),
        cursor="MTIz",
        counts=ReleaseCounts(benchmarks=11, models=20, results=55),
        files=files,
    )


FILES = (
    ReleaseFile("almanac.ndjson", 30_512, "a" * 64, "application/x-ndjson"),
    ReleaseFile("almanac.eee.jsonl", 20_001, "b" * 64, "application/jsonl"),
    ReleaseFile("benchmarks/code-interpreter-benchmark-general.csv", 1_234, "c" * 64, "text/csv"),
)


def test_every_input_appears_where_croissant_puts_it(tmp_path: Path) -> None:
    release = a_release(*FILES)

    document = descriptor(release, BASE_URL + "/", LICENSE, SITE)

    assert validate(written(document, tmp_path)).returncode == 0
    home = f"{BASE_URL}/releases/2026-12-02-1a2b3c4d5e6f"
    assert document["conformsTo"] == "http://mlcommons.org/croissant/1.0"
    assert document["@type"] == "sc:Dataset"
    assert document["name"] == "Benchmark Almanac: Almanac & friends: 100% of {them}"
    assert "2026-12-02-1a2b3c4d5e6f" in document["description"]
    assert "MTIz" in document["description"]
    assert "11 benchmarks, 20 models and 55 leaderboard rows" in document["description"]
    assert document["license"] == LICENSE
    assert document["url"] == home
    assert document["citeAs"] == bibtex(release, BASE_URL, SITE)
    assert document["datePublished"] == "2026-12-02T13:45:00+00:00"
    assert document["identifier"] == "2026-12-02-1a2b3c4d5e6f"
    assert document["version"] == "2026.12.2+1a2b3c4d5e6f"  # semver: the date, the hash
    assert document["creator"] == {"@type": "sc:Organization", "name": SITE, "url": BASE_URL}
    objects = [item for item in document["distribution"] if item["@type"] == "cr:FileObject"]
    assert objects == [
        {
            "@type": "cr:FileObject",
            "@id": file.name,
            "name": file.name,
            "description": description,
            "contentUrl": f"{home}/{file.name}",
            "contentSize": f"{file.size} B",
            "encodingFormat": encoding,
            "sha256": file.sha256,
        }
        for file, encoding, description in zip(
            FILES,
            ["application/jsonlines", "application/jsonlines", "text/csv"],  # Croissant's names
            [
                DESCRIPTIONS["application/x-ndjson"],
                DESCRIPTIONS["application/jsonl"],
                DESCRIPTIONS["text/csv"],
            ],
            strict=True,
        )
    ]
    [file_set] = [item for item in document["distribution"] if item["@type"] == "cr:FileSet"]
    assert file_set["includes"] == "benchmarks/*.csv"
    sets = {record_set["@id"]: record_set for record_set in document["recordSet"]}
    assert list(sets) == ["evaluations", "leaderboards"]
    assert [field["name"] for field in sets["evaluations"]["field"]] == [
        "schema_version",
        "evaluation_id",
        "retrieved_timestamp",
    ]
    assert {field["source"]["fileObject"]["@id"] for field in sets["evaluations"]["field"]} == {
        "almanac.eee.jsonl"
    }
    assert [field["name"] for field in sets["leaderboards"]["field"]] == [
        "benchmark",
        *DOWNLOADED_COLUMNS,
    ]


def test_a_release_of_the_ndjson_alone_lists_it_with_no_record_set(tmp_path: Path) -> None:
    document = descriptor(a_release(FILES[0]), BASE_URL, LICENSE, SITE)

    assert validate(written(document, tmp_path)).returncode == 0
    assert [item["@id"] for item in document["distribution"]] == ["almanac.ndjson"]
    assert document["recordSet"] == []


def test_the_validator_refuses_a_descriptor_that_breaks_croissant(tmp_path: Path) -> None:
    """The check can fail: a FileObject without its hash is an error mlcroissant names."""
    document = descriptor(a_release(*FILES), BASE_URL, LICENSE, SITE)
    del document["distribution"][0]["sha256"]

    checked = validate(written(document, tmp_path))

    assert checked.returncode == 1
    assert "sha256" in checked.stderr


@pytest.mark.parametrize("release_id", ["2026-12-02-1a2b3c4d5e6f", "not-dated"])
def test_an_id_of_another_shape_has_no_version_but_keeps_its_identifier(release_id: str) -> None:
    release = Release(
        release_id, "T", datetime(2026, 12, 2, tzinfo=UTC), "c", ReleaseCounts(0, 0, 0), ()
    )

    document = descriptor(release, BASE_URL, LICENSE, SITE)

    assert document["identifier"] == release_id
    assert ("version" in document) == (release_id != "not-dated")
