"""What a release is rendered as, through the real app, from a release really made: its
Croissant descriptor (which `mlcroissant validate` accepts, naming every file the manifest
lists), its citations, and a leaderboard as of the release as Markdown and LaTeX tables. Both
stores."""

import hashlib
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from bibtexparser.entrypoint import parse_string

from releases import StoredRelease, delete_release
from schema import create_release
from server.app import create_app
from server.settings import Settings
from store import Store
from tests.conftest import http_client

LICENSE = "https://creativecommons.org/licenses/by/4.0/"
SLUG = "code-interpreter-benchmark-general"
MLCROISSANT = Path(sys.executable).with_name("mlcroissant")


@pytest.fixture
def settings() -> Settings:
    return Settings(release_license_url=LICENSE)


@pytest.fixture
async def released(store: Store) -> StoredRelease:
    stored, _ = await create_release(store, "Code Interpreter tracks & friends")
    return stored


async def test_the_croissant_descriptor_validates_and_names_every_file(
    client: httpx.AsyncClient, released: StoredRelease, tmp_path: Path
) -> None:
    answer = await client.get(f"/releases/{released.release.id}/croissant.json")
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/ld+json"
    descriptor = answer.json()
    assert descriptor["license"] == LICENSE
    assert descriptor["identifier"] == released.release.id
    named = {
        item["name"]: item["sha256"]
        for item in descriptor["distribution"]
        if item["@type"] == "cr:FileObject"
    }
    for file in released.release.files:
        assert named[file.name] == file.sha256
        served = await client.get(item_url(descriptor, file.name))
        assert hashlib.sha256(served.content).hexdigest() == file.sha256
    path = tmp_path / "croissant.json"
    path.write_bytes(answer.content)
    checked = validate(path)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def validate(path: Path) -> subprocess.CompletedProcess[str]:
    """`mlcroissant validate --jsonld FILE`, the published command, in a process of its own."""
    return subprocess.run(
        [str(MLCROISSANT), "validate", "--jsonld", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def item_url(descriptor: dict[str, object], name: str) -> str:
    [url] = [
        item["contentUrl"]
        for item in descriptor["distribution"]  # type: ignore[attr-defined]
        if item.get("name") == name
    ]
    return str(url).removeprefix("http://almanac.test")


async def test_the_citations_name_the_release(
    client: httpx.AsyncClient, released: StoredRelease
) -> None:
    base = f"/releases/{released.release.id}"
    bib = await client.get(f"{base}/citation.bib")
    assert bib.status_code == 200
    [entry] = parse_string(bib.text).entries
    assert entry["version"] == released.release.id
    assert f"http://almanac.test{base}" in entry["url"]
    cff = await client.get(f"{base}/CITATION.cff")
    assert cff.status_code == 200
    assert "cff-version: 1.2.0" in cff.text
    assert released.release.id in cff.text
    again = await client.get(f"{base}/citation.bib", headers={"If-None-Match": bib.headers["etag"]})
    assert again.status_code == 304


async def test_a_leaderboard_as_of_the_release_as_tables(
    client: httpx.AsyncClient, released: StoredRelease
) -> None:
    base = f"/releases/{released.release.id}/benchmarks/{SLUG}"
    markdown = await client.get(f"{base}.md")
    assert markdown.status_code == 200
    assert markdown.headers["content-type"] == "text/markdown; charset=utf-8"
    rows = [line for line in markdown.text.splitlines() if line.startswith("|")]
    assert "GPT-4 (snapshot unspecified)" in rows[2]
    assert "82.8" in rows[2]
    assert released.release.id in markdown.text
    latex = await client.get(f"{base}.tex")
    assert latex.status_code == 200
    assert "\\caption{" in latex.text
    assert released.release.id in latex.text
    assert "tracks \\& friends" in latex.text  # the title's & escaped
    csv = await client.get(f"{base}.csv")
    assert markdown.headers["almanac-cost"] == csv.headers["almanac-cost"]


async def test_what_cannot_be_rendered_is_404_and_a_deleted_release_410(
    client: httpx.AsyncClient, store: Store, released: StoredRelease
) -> None:
    base = f"/releases/{released.release.id}"
    assert (await client.get(f"{base}/benchmarks/no-such.md")).status_code == 404
    await delete_release(store, released.release.id, "misread", None)
    for name in ("croissant.json", "citation.bib", f"benchmarks/{SLUG}.tex"):
        answer = await client.get(f"{base}/{name}")
        assert answer.status_code == 410
        assert answer.json()["errors"][0]["extensions"]["code"] == "GONE"


async def test_no_license_no_descriptor(store: Store, released: StoredRelease) -> None:
    app = create_app(Settings(), store)
    async with http_client(app) as client:
        answer = await client.get(f"/releases/{released.release.id}/croissant.json")
    await app.services.shared.budgets.close()
    assert answer.status_code == 404
    assert "ALMANAC_RELEASE_LICENSE_URL" in answer.json()["errors"][0]["message"]
