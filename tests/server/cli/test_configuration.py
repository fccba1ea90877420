"""Configuration checked at start: every bad setting named with its reason, nothing started;
`almanac config` shows what is in effect, secrets masked."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from server.cli import main

BAD_SETTINGS = [
    ("ALMANAC_MAX_DEPTH", "-1", "Input should be greater than 0 (given '-1')"),
    ("ALMANAC_MAX_BODY_BYTES", "lots", "Input should be a valid integer"),
    ("ALMANAC_LOG_FORMAT", "xml", "Input should be 'text' or 'json'"),
    ("ALMANAC_METRICS", "perhaps", "Input should be a valid boolean"),
    ("ALMANAC_METRICS_PORT", "70000", "less than or equal to 65535"),
    ("ALMANAC_SHUTDOWN_DRAIN_SECONDS", "-2", "greater than or equal to 0"),
    ("ALMANAC_CHANGE_RETENTION_DAYS", "0", "greater than 0"),
    ("ALMANAC_SUBSCRIPTION_SEND_TIMEOUT_SECONDS", "0", "greater than 0"),
    ("ALMANAC_MONGODB_URI", "mongo://db", "Invalid URI scheme"),
    ("ALMANAC_MONGODB_URI", "mongodb://db:99999", "Port must be an integer"),
    ("ALMANAC_REDIS_URL", "http://cache", "Redis URL must specify one of the following schemes"),
    ("ALMANAC_CORS_ORIGINS", "example.org", "'example.org' is not an origin"),
    ("ALMANAC_CORS_ORIGIN_REGEX", "http://(localhost", "is not a regular expression"),
    ("ALMANAC_TRUSTED_DOCUMENTS", "/no/such/manifest.json", "No such file or directory"),
    ("ALMANAC_DATA_DIR", "/proc/almanac", "/proc is not writable"),
]


def invoke(*args: str, env: dict[str, str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize(("name", "value", "message"), BAD_SETTINGS)
def test_a_bad_setting_is_refused_with_its_message(name: str, value: str, message: str) -> None:
    code, out, err = invoke("serve", env={name: value})
    assert code == 2
    assert "Configuration refused; nothing was started:" in err
    (line,) = [line for line in err.splitlines() if line.strip().startswith(name)]
    assert message in line
    assert "GraphiQL" not in out  # refused before anything was announced


def test_every_bad_setting_is_named_at_once() -> None:
    env = {name: value for name, value, _ in BAD_SETTINGS if name != "ALMANAC_MONGODB_URI"}
    code, _, err = invoke("config", env=env)
    assert code == 2
    named = {line.split(":")[0].strip() for line in err.splitlines()[1:]}
    assert named == set(env)


def test_a_rule_between_settings_is_refused_too() -> None:
    code, _, err = invoke("serve", env={"ALMANAC_MAX_QUERY_COST": "999999"})
    assert code == 2
    assert "max_query_cost (999999) must not exceed the smallest bucket (5000)" in err


def test_a_wrong_hash_in_the_trusted_documents_is_refused(tmp_path: Path) -> None:
    manifest = tmp_path / "trusted.json"
    manifest.write_text(json.dumps({"0" * 64: "{ benchmarks { totalCount } }"}))
    code, _, err = invoke("serve", env={"ALMANAC_TRUSTED_DOCUMENTS": str(manifest)})
    assert code == 2
    assert "is not the SHA-256 of its document" in err


def test_metrics_cannot_share_the_api_port() -> None:
    code, _, err = invoke("serve", "--port", "9100", env={"ALMANAC_METRICS_PORT": "9100"})
    assert code == 2
    assert "ALMANAC_METRICS_PORT: 9100 is the API's own port" in err


def test_config_shows_the_effective_settings_with_secrets_masked(tmp_path: Path) -> None:
    env = {
        "ALMANAC_MONGODB_URI": "mongodb://editor:s3cret-pw@db1:27017,db2:27017/?replicaSet=rs0",
        "ALMANAC_REDIS_URL": "redis://:r3dis-pw@cache:6379/0",
        "ALMANAC_MAX_DEPTH": "12",
        "ALMANAC_DATA_DIR": str(tmp_path),
    }
    code, out, _ = invoke("config", env=env)
    assert code == 0
    assert "s3cret-pw" not in out
    assert "r3dis-pw" not in out
    lines = {line.split()[0]: line.split()[1:] for line in out.splitlines()}
    assert lines["ALMANAC_MONGODB_URI"] == [
        "mongodb://editor:****@db1:27017,db2:27017/?replicaSet=rs0",
        "(set)",
    ]
    assert lines["ALMANAC_REDIS_URL"] == ["redis://:****@cache:6379/0", "(set)"]
    assert lines["ALMANAC_MAX_DEPTH"] == ["12", "(set)"]
    assert lines["ALMANAC_MAX_ALIASES"] == ["30"]  # a default

    code, out, _ = invoke("config", "--json", env=env)
    shown = json.loads(out)
    assert shown["ALMANAC_REDIS_URL"] == "redis://:****@cache:6379/0"
    assert shown["ALMANAC_METRICS"] == "true"


def test_an_unknown_variable_is_pointed_out(caplog: pytest.LogCaptureFixture) -> None:
    code, _, _ = invoke("config", env={"ALMANAC_MAX_DEPHT": "3"})
    assert code == 0
    assert "ALMANAC_MAX_DEPHT is no setting: ignored (misspelt?)" in caplog.text


async def test_the_change_retention_reaches_the_store(tmp_path: Path) -> None:
    from datetime import timedelta

    from server.services import open_configured
    from server.settings import Settings

    opened = open_configured(Settings(data_dir=tmp_path, change_retention_days=7))
    try:
        assert opened.retention == timedelta(days=7)  # type: ignore[attr-defined]
    finally:
        await opened.close()
