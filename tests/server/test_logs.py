"""One log line per request, with its request ID (taken from the client, or made, and returned),
as text or as JSON (`ALMANAC_LOG_FORMAT=json`)."""

import json
import logging
import re

import httpx
import pytest
from pythonjsonlogger.json import JsonFormatter

from server.api_keys import create_key
from server.logs import JSON_FIELDS, WithRequestId, log_config, request_id
from server.settings import Settings
from store.queries import Store

QUERY = {"query": "query Coverage { modelCardCoverage { labsRead } }"}


def request_lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [record for record in caplog.records if record.name == "almanac.requests"]


async def test_a_request_id_is_taken_or_made_and_returned(client: httpx.AsyncClient) -> None:
    given = await client.post("/graphql", json=QUERY, headers={"X-Request-ID": "site-42"})
    assert given.headers["x-request-id"] == "site-42"
    made = await client.post("/graphql", json=QUERY)
    assert re.fullmatch(r"[0-9a-f]{32}", made.headers["x-request-id"])
    odd = await client.post("/graphql", json=QUERY, headers={"X-Request-ID": "x" * 500})
    assert re.fullmatch(r"[0-9a-f]{32}", odd.headers["x-request-id"])


async def test_each_request_is_one_line_with_its_fields(
    client: httpx.AsyncClient, store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    key = await create_key(store, "partner-a", "read")
    caplog.set_level(logging.INFO, logger="almanac.requests")
    response = await client.post(
        "/graphql",
        json=QUERY,
        headers={"X-Request-ID": "abc-1", "Authorization": f"Bearer {key}"},
    )
    [line] = request_lines(caplog)
    fields = line.__dict__
    assert fields["request_id"] == "abc-1" == response.headers["x-request-id"]
    assert (fields["method"], fields["path"], fields["status"]) == ("POST", "/graphql", 200)
    assert fields["operation"] == "Coverage"
    assert fields["cost"] == response.json()["extensions"]["cost"]["requestedQueryCost"]
    assert fields["key"] == "partner-a"  # the key's name, never the key
    assert key not in line.getMessage()
    assert fields["client"] == "127.0.0.1"
    assert fields["duration_ms"] >= 0
    caplog.clear()
    await client.post("/graphql", json={"query": "{ nope }"})
    [refused] = request_lines(caplog)
    assert refused.__dict__["code"] == "GRAPHQL_VALIDATION_FAILED"


async def test_json_lines_carry_every_field(
    client: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="almanac.requests")
    await client.post("/graphql", json=QUERY, headers={"X-Request-ID": "json-1"})
    [line] = request_lines(caplog)
    config = log_config(Settings(log_format="json"))
    assert config["formatters"]["main"]["()"] == "pythonjsonlogger.json.JsonFormatter"
    printed = json.loads(JsonFormatter(JSON_FIELDS).format(line))
    assert printed["request_id"] == "json-1"
    assert printed["name"] == "almanac.requests"
    for name in (
        "method",
        "path",
        "status",
        "duration_ms",
        "operation",
        "cost",
        "code",
        "key",
        "client",
    ):
        assert name in printed, name


def test_every_line_written_during_a_request_names_it() -> None:
    record = logging.LogRecord("almanac.errors", logging.ERROR, __file__, 1, "failed", None, None)
    token = request_id.set("req-7")
    try:
        assert WithRequestId().filter(record)
    finally:
        request_id.reset(token)
    assert record.request_id == "req-7"  # type: ignore[attr-defined]
