"""The `almanac` command line."""

import asyncio
import json
import logging
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from importlib.metadata import version
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner, Result

from editing import export_dataset
from request_limits.budgets import BucketPolicy
from schema import Identity
from schema.stability import published_sdl
from server.api_keys import InvalidCredentials, authenticate
from server.app import create_app
from server.cli import main
from server.settings import Settings
from store import Store
from store.client import connect
from store.seed import load_bundled_dataset
from tests.conftest import almanac_process, http_client

ROOT = Path(__file__).parents[3]


def test_committed_schema_matches_the_code() -> None:
    committed = (ROOT / "schema.graphql").read_text(encoding="utf-8")
    assert committed == published_sdl(), "schema.graphql is stale: run `almanac export-schema`"


def test_export_schema_writes_the_sdl(tmp_path: Path) -> None:
    target = tmp_path / "schema.graphql"
    result = CliRunner().invoke(main, ["export-schema", "--output", str(target)])
    assert result.exit_code == 0, result.output
    sdl = target.read_text(encoding="utf-8")
    assert sdl == published_sdl()
    assert "  benchmark(\n    slug: String!\n" in sdl


def test_export_schema_refuses_a_breaking_change(tmp_path: Path) -> None:
    target = tmp_path / "schema.graphql"
    # The published schema had a field the code no longer has.
    published = published_sdl().replace(
        "type Lab {\n", 'type Lab {\n  """Gone now."""\n  founded: Int\n', 1
    )
    target.write_text(published, encoding="utf-8")
    result = CliRunner().invoke(main, ["export-schema", "--output", str(target)])
    assert result.exit_code == 1
    assert "Field Lab.founded was removed." in result.output
    assert target.read_text(encoding="utf-8") == published


def test_seed_fills_the_embedded_store_once(database: Store) -> None:
    first = run("seed")
    assert first.exit_code == 0, first.output
    assert "11 benchmarks" in first.stdout
    assert "26 created" in first.stdout
    again = run("seed")
    assert "0 created, 0 updated, 26 unchanged" in again.stdout
    assert len(asyncio.run(database.benchmarks())) == 11


async def test_start_up_says_which_store_it_serves(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv("ALMANAC_MONGODB_URI", raising=False)
    app = create_app(Settings())
    transport = httpx.ASGITransport(app=app)
    with caplog.at_level(logging.INFO):
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(transport=transport, base_url="http://almanac.test") as client,
        ):
            query = {"query": "{ categories { benchmarkCount } }"}
            response = await client.post("/graphql", json=query)
            assert response.json()["data"] == {"categories": [{"benchmarkCount": 11}]}
    # Which data directory (clones of one user share the default) and what it holds.
    said = [record.getMessage() for record in caplog.records]
    assert any(f"embedded store in {Settings().data_dir}" in line for line in said), said
    assert any(line.endswith(": 11 benchmarks") for line in said), said


@pytest.fixture
def database(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    """The embedded store the CLI works on (ALMANAC_DATA_DIR), opened beside it as a server
    would be: empty, and marked seeded, so that the CLI does not seed it (as it does a new one)."""
    monkeypatch.delenv("ALMANAC_MONGODB_URI", raising=False)
    beside = connect(None, "almanac", data_dir)
    asyncio.run(beside.mark_seed(finished=True))
    yield beside
    asyncio.run(beside.close())


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_keys_are_created_listed_and_revoked(database: Store) -> None:
    created = run("keys", "create", "--name", "ingest-bot", "--scope", "admin")
    assert created.exit_code == 0, created.output
    key = created.stdout.strip()
    assert key.startswith("alm_")
    assert "cannot be shown again" in created.stderr
    assert asyncio.run(authenticate(database, f"Bearer {key}")) == Identity("ingest-bot", "admin")

    listed = run("keys", "list")
    assert "ingest-bot\tadmin\tconfigured budget\tcreated " in listed.stdout
    assert "in force" in listed.stdout
    assert key.split("_")[2] not in listed.stdout

    assert run("keys", "create", "--name", "ingest-bot", "--scope", "read").exit_code == 2
    assert run("keys", "revoke", "ingest-bot").exit_code == 0
    assert "revoked 20" in run("keys", "list").stdout
    assert run("keys", "revoke", "ingest-bot").exit_code == 1
    with pytest.raises(InvalidCredentials):
        asyncio.run(authenticate(database, f"Bearer {key}"))


def test_a_key_gets_its_own_budget_and_gives_it_back(database: Store) -> None:
    created = run(
        "keys",
        "create",
        "--name",
        "site",
        "--scope",
        "read",
        "--capacity",
        "50000",
        "--restore-rate",
        "2500",
    )
    assert created.exit_code == 0, created.output
    assert "budget 50000 points, +2500/s" in created.stderr
    key = f"Bearer {created.stdout.strip()}"

    def budget() -> BucketPolicy | None:
        identity = asyncio.run(authenticate(database, key))
        assert identity is not None
        return identity.budget

    assert budget() == BucketPolicy(50_000, 2_500)
    assert "site\tread\tbudget 50000 points, +2500/s\tcreated" in run("keys", "list").stdout

    assert (
        run("keys", "budget", "site", "--capacity", "8000", "--restore-rate", "0.5").exit_code == 0
    )
    assert budget() == BucketPolicy(8_000, 0.5)
    cleared = run("keys", "budget", "site")
    assert "now has the configured budget" in cleared.stdout
    assert budget() is None
    assert "site\tread\tconfigured budget\t" in run("keys", "list").stdout


@pytest.mark.parametrize(
    ("args", "complaint"),
    [
        (["--capacity", "9000"], "both --capacity and --restore-rate"),
        (["--restore-rate", "10"], "both --capacity and --restore-rate"),
        (
            ["--capacity", "4999", "--restore-rate", "10"],
            "below the most a request may cost (5000)",
        ),
        (["--capacity", "9000", "--restore-rate", "0"], "--restore-rate"),
        (["--capacity", "lots", "--restore-rate", "10"], "--capacity"),
    ],
)
def test_a_budget_that_cannot_work_is_refused(
    database: Store, args: list[str], complaint: str
) -> None:
    created = run("keys", "create", "--name", "partner", "--scope", "read", *args)
    assert created.exit_code == 2
    assert complaint in created.stderr
    assert run("keys", "list").stdout == ""
    assert (
        run("keys", "budget", "nobody", "--capacity", "9000", "--restore-rate", "1").exit_code == 1
    )


def test_import_dry_run_import_and_export(database: Store, tmp_path: Path) -> None:
    bundled = write_bundled(tmp_path)

    dry = run("import", str(bundled), "--dry-run", "--by", "ci")
    assert dry.exit_code == 0, dry.output
    assert "Would import (dry run, nothing written)" in dry.stdout
    assert "created   benchmarks code-interpreter-benchmark-general" in dry.stdout
    assert asyncio.run(database.benchmarks()) == []

    done = run("import", str(bundled), "--by", "ci")
    assert "Imported: 4 labs, 1 category, 8 models, 11 benchmarks, 2 site records: 26 created" in (
        done.stdout
    )
    again = run("import", str(bundled))
    assert "0 created, 0 updated, 26 unchanged, 0 rejected" in again.stdout

    exported = tmp_path / "export.json"
    assert run("export", str(exported)).exit_code == 0
    assert json.loads(exported.read_text(encoding="utf-8")) == asyncio.run(export_dataset(database))


def test_an_import_with_rejected_rows_says_why_and_fails(database: Store, tmp_path: Path) -> None:
    run("import", str(write_bundled(tmp_path)))
    rows = tmp_path / "rows.csv"
    rows.write_text(
        "benchmark,read_on,model_name,score\n"
        "code-interpreter-benchmark-math,2026-11-20,Qwen-14B-Chat,101\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(main, ["import", str(rows)])
    assert result.exit_code == 1
    assert (
        "rejected  benchmarks code-interpreter-benchmark-math: line[2].score: "
        "101.0 is outside 0-100 for PERCENT" in result.stdout
    )


def test_an_import_says_what_each_read_changes(database: Store, tmp_path: Path) -> None:
    """As a dry-run mutation does: rows added, removed and changed, and the leaders."""
    run("import", str(write_bundled(tmp_path)))
    rows = tmp_path / "rows.csv"
    rows.write_text(
        "benchmark,read_on,model_name,setting,score\n"
        "code-interpreter-benchmark-general,2026-11-20,Qwen-14B-Chat,version 20231206,99\n"
        "code-interpreter-benchmark-general,2026-11-20,New Model,v1,10\n",
        encoding="utf-8",
    )
    refused = run("import", str(rows), "--dry-run")
    assert refused.exit_code == 1
    assert "leaves out 9 rows of the current leaderboard ('GPT-4" in refused.stdout
    dry = run("import", str(rows), "--dry-run", "--allow-removals")
    assert dry.exit_code == 0, dry.output
    assert (
        "updated   benchmarks code-interpreter-benchmark-general: +1 -9 ~1 rows; "
        "leader GPT-4 (snapshot unspecified) (82.8) → Qwen-14B (99); "
        "tracked leader Qwen-14B (65.5) → Qwen-14B (99)"
    ) in dry.stdout


def test_a_file_that_is_not_the_format_is_refused(database: Store, tmp_path: Path) -> None:
    for name, text, message in (
        ("a.json", "{nope", "not valid JSON (line 1, column 2)"),
        ("b.json", '{"format": "other/2"}', "format: expected 'benchmark-almanac/1'"),
        ("c.csv", "benchmark,when\n", "header: missing column 'read_on'"),
    ):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        result = CliRunner().invoke(main, ["import", str(path)])
        assert result.exit_code == 1
        assert message in result.output


def write_bundled(folder: Path) -> Path:
    path = folder / "bundled.json"
    path.write_text(json.dumps(load_bundled_dataset()), encoding="utf-8")
    return path


async def test_trusted_documents_writes_the_sites_manifest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store: Store
) -> None:
    """The manifest of the repository's contract documents, as `ALMANAC_TRUSTED_DOCUMENTS`
    takes it: the site's page runs (by text or by hash), any other document is refused."""
    monkeypatch.chdir(ROOT)
    manifest = tmp_path / "trusted-documents.json"
    result = CliRunner().invoke(main, ["trusted-documents", "--output", str(manifest)])
    assert result.exit_code == 0, result.output
    assert f"Wrote {manifest}: 1 trusted document." in result.output
    page = (ROOT / "contract" / "benchmark-page.graphql").read_text(encoding="utf-8")
    [(sha256, text)] = json.loads(manifest.read_text(encoding="utf-8")).items()
    assert text == page
    app = create_app(Settings(trusted_documents=manifest), store)
    variables = {"slug": "code-interpreter-benchmark-general"}
    async with http_client(app) as http:
        by_text = await http.post("/graphql", json={"query": page, "variables": variables})
        assert by_text.json()["data"]["benchmark"]["slug"] == variables["slug"]
        by_hash = await http.post(
            "/graphql", json={"documentId": f"sha256:{sha256}", "variables": variables}
        )
        assert by_hash.json()["data"] == by_text.json()["data"]
        other = await http.post("/graphql", json={"query": "{ categories { slug } }"})
        assert other.json()["errors"][0]["extensions"]["code"] == "DOCUMENT_NOT_TRUSTED"
    await app.services.shared.budgets.close()


def test_trusted_documents_refuses_a_document_the_schema_would_not_run(tmp_path: Path) -> None:
    document = tmp_path / "stale.graphql"
    document.write_text('query Page { benchmark(slug: "x") { nosuchfield } }', encoding="utf-8")
    manifest = tmp_path / "trusted-documents.json"
    result = CliRunner().invoke(
        main, ["trusted-documents", str(document), "--output", str(manifest)]
    )
    assert result.exit_code == 1
    assert "Cannot query field 'nosuchfield' on type 'Benchmark'" in result.output
    assert not manifest.exists()


def almanac(*args: str, **settings: str) -> subprocess.CompletedProcess[str]:
    """The `almanac` command in a process of its own, with only the given ALMANAC_* settings."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("ALMANAC_")}
    environment.update({f"ALMANAC_{name.upper()}": value for name, value in settings.items()})
    return subprocess.run(
        [sys.executable, "-m", "server.cli", *args],
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_new_data_directory_is_seeded_by_the_first_command_that_opens_it(
    tmp_path: Path,
) -> None:
    """`keys create` first, then `serve`: the server serves the bundled data, seeded once."""
    directory = str(tmp_path / "new")
    created = almanac("keys", "create", "--name", "site", "--scope", "read", data_dir=directory)
    assert created.returncode == 0, created.stderr
    assert "Loaded the bundled dataset" in created.stderr
    again = almanac("keys", "list", data_dir=directory)
    assert "Loaded the bundled dataset" not in again.stderr
    with almanac_process(data_dir=directory) as served:
        response = httpx.post(
            f"{served.url}/graphql",
            json={"query": "{ categories { benchmarkCount } }"},
            headers={"Authorization": f"Bearer {created.stdout.strip()}"},
            timeout=30,
        )
        assert response.json()["data"] == {"categories": [{"benchmarkCount": 11}]}
        assert not any("Loaded the bundled dataset" in line for line in served.log)


def foreign_database(path: Path) -> None:
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE invoices (number INTEGER)")
    connection.commit()
    connection.close()


@pytest.mark.parametrize(
    ("spoil", "said"),
    [
        (lambda path: path.write_bytes(bytes(range(256)) * 64), "cannot be read"),
        (lambda path: path.write_text("just some notes\n" * 500), "cannot be read"),
        (foreign_database, "an SQLite database of something else"),
    ],
    ids=["garbage", "text", "foreign"],
)
@pytest.mark.parametrize("command", [["serve", "--port", "0"], ["keys", "list"], ["seed"]])
def test_a_database_file_that_cannot_be_read_is_one_message_and_exit_2(
    tmp_path: Path, spoil: Callable[[Path], None], said: str, command: list[str]
) -> None:
    database_file = tmp_path / "almanac.sqlite3"
    spoil(database_file)
    before = database_file.read_bytes()
    done = almanac(*command, data_dir=str(tmp_path))
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert str(database_file) in lines[0]
    assert said in lines[0]
    assert "move it aside" in lines[0]
    assert database_file.read_bytes() == before  # left as it was, for whoever looks at it


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])  # closed again when the probe is


@pytest.mark.parametrize("command", [["seed"], ["serve", "--port", "0"]])
def test_an_unreachable_mongodb_is_one_line_naming_its_host_and_the_setting(
    command: list[str],
) -> None:
    port = closed_port()
    done = almanac(
        *command,
        mongodb_uri=f"mongodb://reader:secret@127.0.0.1:{port}/",
        mongodb_timeout_seconds="0.5",
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert f"127.0.0.1:{port}" in lines[0]
    assert "within 0.5 s" in lines[0]
    assert "ALMANAC_MONGODB_URI" in lines[0]
    assert "ALMANAC_MONGODB_TIMEOUT_SECONDS" in lines[0]
    assert "secret" not in lines[0]


CATEGORIES = "query Categories { categories { slug __typename } }"
COVERAGE = "query Coverage { modelCardCoverage { labsRead } }"


def client_manifests(folder: Path) -> tuple[Path, Path]:
    """An Apollo persisted-query manifest and a Relay persisted_queries.json, each with the ids
    its tool gives (an id of Apollo's own choosing; Relay's MD5)."""
    apollo = folder / "persisted-query-manifest.json"
    operation = {"id": "categories-v1", "name": "Categories", "type": "query", "body": CATEGORIES}
    apollo.write_text(
        json.dumps(
            {"format": "apollo-persisted-query-manifest", "version": 1, "operations": [operation]}
        )
    )
    relay = folder / "persisted_queries.json"
    relay.write_text(json.dumps({"3f2b8c0e9a1d4b7c8e6f5a4b3c2d1e0f": COVERAGE}))
    return apollo, relay


async def test_trusted_documents_takes_the_clients_manifests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store: Store
) -> None:
    """Apollo's and Relay's manifests and the contract, merged: each runs by the id its own
    manifest gives it, exactly as the client sends it."""
    monkeypatch.chdir(ROOT)
    apollo, relay = client_manifests(tmp_path)
    contract = ROOT / "contract" / "benchmark-page.graphql"
    manifest = tmp_path / "trusted-documents.json"
    result = CliRunner().invoke(
        main,
        ["trusted-documents", str(contract), str(apollo), str(relay), "--output", str(manifest)],
    )
    assert result.exit_code == 0, result.output
    assert f"Wrote {manifest}: 3 trusted documents." in result.output
    app = create_app(Settings(trusted_documents=manifest), store)
    async with http_client(app) as http:
        by_apollo_id = await http.post(
            "/graphql",
            json={"extensions": {"persistedQuery": {"version": 1, "sha256Hash": "categories-v1"}}},
        )
        assert by_apollo_id.json()["data"]["categories"][0]["__typename"] == "Category"
        by_relay_id = await http.post(
            "/graphql", json={"documentId": "3f2b8c0e9a1d4b7c8e6f5a4b3c2d1e0f"}
        )
        assert by_relay_id.json()["data"]["modelCardCoverage"]["labsRead"] > 0
        unknown = await http.post(
            "/graphql", json={"documentId": "3F2B8C0E9A1D4B7C8E6F5A4B3C2D1E0F"}
        )
        assert unknown.json()["errors"][0]["extensions"]["code"] == "DOCUMENT_NOT_TRUSTED"
    await app.services.shared.budgets.close()
    # The server takes each manifest as it is, too.
    for client_manifest in (apollo, relay):
        assert Settings(trusted_documents=client_manifest).trusted_documents == client_manifest


def test_a_manifest_entry_that_would_not_run_is_refused_by_its_id(tmp_path: Path) -> None:
    relay = tmp_path / "persisted_queries.json"
    relay.write_text(json.dumps({"0a1b2c": 'query Old { benchmark(slug: "x") { gone } }'}))
    result = CliRunner().invoke(
        main, ["trusted-documents", str(relay), "--output", str(tmp_path / "out.json")]
    )
    assert result.exit_code == 1
    assert f"Refused: {relay} (0a1b2c) does not run on this schema:" in result.stderr
    assert not (tmp_path / "out.json").exists()
    code, _, err = invoke_serve_with(relay)
    assert code == 2
    assert "0a1b2c does not run on this schema" in err


def invoke_serve_with(manifest: Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["serve"], env={"ALMANAC_TRUSTED_DOCUMENTS": str(manifest)})
    return result.exit_code, result.stdout, result.stderr


def test_backup_copies_the_embedded_store_while_it_is_open(database: Store, tmp_path: Path) -> None:
    """`almanac backup FILE`: a whole copy, taken while another connection has the store open,
    that opens as the same almanac."""
    assert run("seed").exit_code == 0
    copy = tmp_path / "backups" / "almanac.sqlite3"
    copy.parent.mkdir()
    result = run("backup", str(copy))
    assert result.exit_code == 0, result.output
    held = len(load_bundled_dataset()["benchmarks"])
    assert f"({held} benchmarks) to {copy}." in result.output
    (tmp_path / "restored").mkdir()
    shutil.copy(copy, tmp_path / "restored" / "almanac.sqlite3")
    restored = connect(None, "almanac", tmp_path / "restored")
    try:
        assert asyncio.run(restored.dump()) == asyncio.run(database.dump())
    finally:
        asyncio.run(restored.close())
    assert list(copy.parent.iterdir()) == [copy]  # no partial file left beside it


def test_backup_on_mongodb_says_to_use_mongodump(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ALMANAC_MONGODB_URI", "mongodb://db.invalid:27017")
    result = CliRunner().invoke(main, ["backup", str(tmp_path / "x.sqlite3")])
    assert result.exit_code == 1
    assert "mongodump" in result.stderr
    assert not (tmp_path / "x.sqlite3").exists()


def test_version_is_the_packages() -> None:
    result = run("--version")
    assert result.output == f"almanac, version {version('benchmark-almanac-api')}\n"
