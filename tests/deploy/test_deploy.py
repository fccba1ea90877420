"""The deployment in compose.yaml and deploy/, checked as far as this machine can: each file by
its own tool (Prometheus' promtool, Caddy, Docker Compose), the alerts by promtool's unit tests,
and every metric the dashboard and alerts use against what the API really serves."""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest
import yaml

from server.settings import Settings
from tests.server.observability.test_metrics import scrape

ROOT = Path(__file__).parents[2]
DEPLOY = ROOT / "deploy"
# CI installs the tools and sets this: there, a missing tool fails instead of skipping.
REQUIRED = os.environ.get("ALMANAC_REQUIRE_DEPLOY_TOOLS") == "1"


def tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        if REQUIRED:
            pytest.fail(f"{name} is not installed")
        pytest.skip(f"{name} is not installed (Debian: see .ci/run)")
    return found


def check(*command: str) -> str:
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def dashboard_expressions() -> list[str]:
    dashboard = json.loads((DEPLOY / "grafana" / "dashboards" / "almanac.json").read_text())
    return [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]


def alert_expressions() -> list[str]:
    rules = yaml.safe_load((DEPLOY / "alerts.yml").read_text())
    return [rule["expr"] for group in rules["groups"] for rule in group["rules"]]


def test_prometheus_config_and_rules_are_valid() -> None:
    promtool = tool("promtool")
    assert "SUCCESS" in check(promtool, "check", "config", "deploy/prometheus.yml")
    assert "SUCCESS: 8 rules found" in check(promtool, "check", "rules", "deploy/alerts.yml")


def test_the_alerts_fire_as_their_unit_tests_say() -> None:
    assert "SUCCESS" in check(tool("promtool"), "test", "rules", "deploy/alerts_test.yml")


def test_every_dashboard_query_is_valid_promql(tmp_path: Path) -> None:
    # promtool checks PromQL in rule files: the dashboard's queries, as recording rules.
    rules = {
        "groups": [
            {
                "name": "dashboard",
                "rules": [
                    {"record": f"dashboard:panel_{i}", "expr": expr}
                    for i, expr in enumerate(dashboard_expressions())
                ],
            }
        ]
    }
    path = tmp_path / "dashboard-rules.yml"
    path.write_text(yaml.safe_dump(rules))
    assert "SUCCESS" in check(tool("promtool"), "check", "rules", str(path))


def test_the_proxy_config_is_valid() -> None:
    output = check(
        tool("caddy"), "validate", "--config", "deploy/Caddyfile", "--adapter", "caddyfile"
    )
    assert "Valid configuration" in output


def test_the_compose_file_is_valid() -> None:
    check(tool("docker-compose"), "-f", "compose.yaml", "config", "--quiet")


def test_the_compose_file_sets_only_real_settings() -> None:
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    api = compose["services"]["api-1"]
    assert api == compose["services"]["api-2"]
    known = {f"ALMANAC_{field.upper()}" for field in Settings.model_fields}
    named = {name for name in api["environment"] if name.startswith("ALMANAC_")}
    assert named <= known, named - known
    # The proxy sends traffic only to ready replicas, the ones Prometheus scrapes.
    caddyfile = (DEPLOY / "Caddyfile").read_text()
    assert "reverse_proxy api-1:8000 api-2:8000" in caddyfile
    assert "health_uri /readyz" in caddyfile
    prometheus = yaml.safe_load((DEPLOY / "prometheus.yml").read_text())
    assert prometheus["scrape_configs"][0]["static_configs"][0]["targets"] == [
        "api-1:8000",
        "api-2:8000",
    ]


async def test_every_metric_the_dashboard_and_alerts_use_is_served(
    client: httpx.AsyncClient,
) -> None:
    await client.post("/graphql", json={"query": "{ benchmarks(first: 1) { totalCount } }"})
    unknown = {"persistedQuery": {"version": 1, "sha256Hash": "0" * 64}}
    await client.post("/graphql", json={"extensions": unknown})
    served = {name for name, _ in await scrape(client)}
    used = {
        name
        for expr in dashboard_expressions() + alert_expressions()
        for name in re.findall(r"\balmanac_[a-z_]+", expr)
    }
    assert used, "no metric found in the dashboard or alerts"
    assert used <= served, used - served


def test_every_alert_has_its_runbook() -> None:
    guide = (ROOT / "docs" / "operations.md").read_text()
    headings = {
        line.lstrip("#").strip().lower() for line in guide.splitlines() if line.startswith("#")
    }
    rules = yaml.safe_load((DEPLOY / "alerts.yml").read_text())
    for rule in rules["groups"][0]["rules"]:
        assert rule["alert"].lower() in headings, rule["alert"]
        assert rule["annotations"]["runbook"] == f"docs/operations.md#{rule['alert'].lower()}"
