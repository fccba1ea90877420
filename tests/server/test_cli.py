"""The `almanac` command line."""

import logging
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from server.app import create_app
from server.cli import main, schema_sdl
from server.settings import Settings

ROOT = Path(__file__).parents[2]


def test_committed_schema_matches_the_code() -> None:
    committed = (ROOT / "schema.graphql").read_text(encoding="utf-8")
    assert committed == schema_sdl(), "schema.graphql is stale: run `almanac export-schema`"


def test_export_schema_writes_the_sdl(tmp_path: Path) -> None:
    target = tmp_path / "schema.graphql"
    result = CliRunner().invoke(main, ["export-schema", "--output", str(target)])
    assert result.exit_code == 0, result.output
    sdl = target.read_text(encoding="utf-8")
    assert sdl == schema_sdl()
    assert "benchmark(slug: String!): Benchmark" in sdl


def test_serve_refuses_several_workers_on_the_embedded_store(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ALMANAC_MONGODB_URI", raising=False)
    result = CliRunner().invoke(main, ["serve", "--workers", "2"])
    assert result.exit_code == 2
    assert "ALMANAC_MONGODB_URI" in result.output


def test_seed_needs_a_mongodb(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ALMANAC_MONGODB_URI", raising=False)
    result = CliRunner().invoke(main, ["seed"])
    assert result.exit_code == 2
    assert "ALMANAC_MONGODB_URI" in result.output


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
            assert response.json() == {"data": {"categories": [{"benchmarkCount": 11}]}}
    assert any("embedded in-process store" in record.getMessage() for record in caplog.records)
