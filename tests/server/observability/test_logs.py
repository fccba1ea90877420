"""One log line per request, with its request ID (taken from the client, or made, and returned),
as text or as JSON (`ALMANAC_LOG_FORMAT=json`); other lines carry the same request ID."""

import hashlib
import json
import logging
import logging.config
import re
import urllib.parse

import httpx
import pytest

from server.api_keys import create_key
from server.app import AlmanacApp, create_app
from server.observability.logs import WithRequestId, log_config, request_id
from server.settings import Settings
from store import Store
from store.queries import Collection
from tests.conftest import http_client

QUERY = {"query": "query Coverage { modelCardCoverage { labsRead } }"}


def written(app: AlmanacApp, capsysbinary: pytest.CaptureFixture[bytes]) -> list[str]:
    """The request lines the app wrote (they are buffered: written out first)."""
    assert app.services.request_log is not None
    app.services.request_log.flush()
    return capsysbinary.readouterr().err.decode().splitlines()


async def test_a_request_id_is_taken_or_made_and_returned(client: httpx.AsyncClient) -> None:
    given = await client.post("/graphql", json=QUERY, headers={"X-Request-ID": "site-42"})
    assert given.headers["x-request-id"] == "site-42"
    made = await client.post("/graphql", json=QUERY)
    assert re.fullmatch(r"[0-9a-f]{32}", made.headers["x-request-id"])
    odd = await client.post("/graphql", json=QUERY, headers={"X-Request-ID": "x" * 500})
    assert re.fullmatch(r"[0-9a-f]{32}", odd.headers["x-request-id"])


async def test_each_request_is_one_text_line_with_its_fields(
    store: Store, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    key = await create_key(store, "partner-a", "read")
    app = create_app(Settings(), store)
    async with http_client(app) as http:
        capsysbinary.readouterr()
        response = await http.post(
            "/graphql",
            json=QUERY,
            headers={"X-Request-ID": "abc-1", "Authorization": f"Bearer {key}"},
        )
        cost = response.json()["extensions"]["cost"]["requestedQueryCost"]
        [line] = written(app, capsysbinary)
        assert line == (
            f"INFO:     almanac.requests: POST /graphql 200 {duration(line)}ms "
            f"operation=Coverage cost={cost} code=- key=partner-a client=127.0.0.1 "
            "[request abc-1]"
        )
        assert key not in line  # the key's name, never the key
        await http.post("/graphql", json={"query": "{ nope }"})
        [refused] = written(app, capsysbinary)
    assert "code=GRAPHQL_VALIDATION_FAILED" in refused


def duration(line: str) -> str:
    found = re.search(r" (\d+\.\d)ms ", line)
    assert found is not None, line
    return found[1]


async def test_json_lines_carry_every_field(
    store: Store, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    app = create_app(Settings(log_format="json"), store)
    async with http_client(app) as http:
        capsysbinary.readouterr()
        response = await http.post("/graphql", json=QUERY, headers={"X-Request-ID": "json-1"})
        [line] = written(app, capsysbinary)
    printed = json.loads(line)
    assert printed["request_id"] == "json-1"
    assert printed["name"] == "almanac.requests"
    assert printed["levelname"] == "INFO"
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}", printed["asctime"])
    assert printed["message"] == "POST /graphql 200"
    assert {
        name: printed[name]
        for name in ("method", "path", "status", "operation", "cost", "code", "key", "client")
    } == {
        "method": "POST",
        "path": "/graphql",
        "status": 200,
        "operation": "Coverage",
        "cost": response.json()["extensions"]["cost"]["requestedQueryCost"],
        "code": "-",
        "key": "-",
        "client": "127.0.0.1",
    }
    assert printed["duration_ms"] >= 0


async def test_no_request_lines_above_info(
    store: Store, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    app = create_app(Settings(log_level="warning"), store)
    assert app.services.request_log is None
    async with http_client(app) as http:
        capsysbinary.readouterr()
        await http.post("/graphql", json=QUERY)
    assert capsysbinary.readouterr().err == b""


def test_the_json_format_is_one_object_a_line() -> None:
    config = log_config(Settings(log_format="json"))
    assert config["formatters"]["main"]["()"] == "pythonjsonlogger.json.JsonFormatter"
    assert "%(request_id)s" in config["formatters"]["main"]["format"]


def test_every_line_written_during_a_request_names_it() -> None:
    record = logging.LogRecord("almanac.errors", logging.ERROR, __file__, 1, "failed", None, None)
    token = request_id.set("req-7")
    try:
        assert WithRequestId().filter(record)
    finally:
        request_id.reset(token)
    assert record.request_id == "req-7"  # type: ignore[attr-defined]


async def test_an_error_line_carries_the_request_id_and_the_client_sees_no_traceback(
    client: httpx.AsyncClient,
    store: Store,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def broken() -> None:
        raise RuntimeError("the database caught fire at 10.0.0.7")

    monkeypatch.setattr(store, "site_figures", broken)
    caplog.handler.addFilter(WithRequestId())  # as `almanac serve`'s handler has it
    with caplog.at_level(logging.ERROR):
        response = await client.post("/graphql", json=QUERY, headers={"X-Request-ID": "err-9"})
    assert response.headers["x-request-id"] == "err-9"
    assert response.json()["errors"][0]["extensions"] == {"code": "INTERNAL_SERVER_ERROR"}
    assert "fire" not in response.text
    assert "Traceback" not in response.text
    [logged] = [record for record in caplog.records if record.exc_info]
    assert logged.request_id == "err-9"  # type: ignore[attr-defined]
    assert "caught fire" in str(logged.exc_info[1])  # type: ignore[index]


async def test_a_request_that_is_not_graphql_is_logged_too(
    store: Store, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    app = create_app(Settings(), store)
    async with http_client(app) as http:
        capsysbinary.readouterr()
        await http.get("/healthz", headers={"X-Request-ID": "probe-1"})
        [line] = written(app, capsysbinary)
    assert re.fullmatch(
        r"INFO:     almanac\.requests: GET /healthz 200 \d+\.\dms operation=- cost=- code=- "
        r"key=- client=127\.0\.0\.1 \[request probe-1\]",
        line,
    )


async def test_a_download_is_logged_with_its_key_and_cost(
    store: Store, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    key = await create_key(store, "partner-b", "read")
    app = create_app(Settings(), store)
    async with http_client(app) as http:
        capsysbinary.readouterr()
        response = await http.get(
            "/benchmarks/code-interpreter-benchmark-general.csv",
            headers={"Authorization": f"Bearer {key}"},
        )
        [line] = written(app, capsysbinary)
    assert response.status_code == 200
    spent = 20_000 - int(response.headers["ratelimit-remaining"])  # a key's default bucket
    assert f" cost={spent} code=- key=partner-b " in line


FORGED = "\nINFO:     almanac.requests: GET /admin 200 FORGED\x1b[31m"


async def test_what_a_client_sends_cannot_forge_a_text_line(
    store: Store, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """The path (percent-decoded), the operation's name, the key's name and the client's address,
    escaped: one request is one line, with no terminal escape in it."""
    secret = "s" * 64
    await store.insert(
        Collection.API_KEYS,
        {  # a key named before names were checked
            "key_id": "0123456789ab",
            "name": f"partner{FORGED}",
            "scope": "read",
            "secret_sha256": hashlib.sha256(secret.encode()).hexdigest(),
            "created_at": "2026-11-01T00:00:00Z",
            "revoked_at": None,
        },
    )
    app = create_app(Settings(), store)
    # The address a trusted proxy forwarded (Uvicorn puts it in the scope's client).
    async with http_client(app, address=f"203.0.113.9{FORGED}") as http:
        capsysbinary.readouterr()
        await http.get("/" + urllib.parse.quote(FORGED), headers={"X-Request-ID": "forged-1"})
        [path_line] = written(app, capsysbinary)
        body = {**QUERY, "operationName": f"Coverage{FORGED}"}
        headers = {"Authorization": f"Bearer alm_0123456789ab_{secret}"}
        await http.post("/graphql", json=body, headers=headers)
        [operation_line] = written(app, capsysbinary)
    escaped = "\\nINFO:     almanac.requests: GET /admin 200 FORGED\\x1b[31m"
    assert f"GET /{escaped} 404 " in path_line
    assert f"operation=Coverage{escaped} " in operation_line
    assert f"key=partner{escaped} " in operation_line
    assert f"client=203.0.113.9{escaped} " in operation_line
    assert "\x1b" not in path_line + operation_line


def test_every_text_line_is_one_line() -> None:
    """What any logger writes in the text format (a message quoting a client's value, say)."""
    formatter = logging.config.DictConfigurator(log_config(Settings())).configure_formatter(
        log_config(Settings())["formatters"]["main"]
    )
    record = logging.LogRecord(
        "almanac", logging.WARNING, __file__, 1, "refused %r: %s", ("x", f"value{FORGED}"), None
    )
    WithRequestId().filter(record)
    [line] = formatter.format(record).splitlines()
    assert line == (
        "WARNING:     almanac: refused 'x': value\\nINFO:     almanac.requests: GET /admin 200 "
        "FORGED\\x1b[31m [request -]"
    )
