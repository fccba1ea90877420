"""`almanac serve --workers 2` on the embedded store: both workers serve one data directory,
each sees the other's writes, `/metrics` adds them up, and the metrics' directory goes with
the server."""

import os
import re
import signal
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import Served, almanac_process, free_port
from tests.server.transport.test_shutdown import poll

SLUG = "code-interpreter-benchmark-general"
READ = {"query": f'query Described {{ benchmark(slug: "{SLUG}") {{ description }} }}'}
DESCRIPTION = "Described through one worker"
DESCRIBE = {
    "query": f'mutation {{ updateBenchmark(slug: "{SLUG}", input: {{description: '
    f'"{DESCRIPTION}"}}) {{ description }} }}'
}
UNREFUSING = {"anonymous_bucket_capacity": "1000000000", "anonymous_restore_rate": "1000000000"}
STARTED = re.compile(r"Started server process \[(\d+)\]")


T = TypeVar("T")
Samples = list[tuple[str, dict[str, str], float]]


def scrape(served: Served | str) -> Samples:
    """The metrics at `served`'s /metrics, or at a URL."""
    url = f"{served.url}/metrics" if isinstance(served, Served) else served
    text = httpx.get(url, timeout=30).text
    return [
        (sample.name, sample.labels, sample.value)
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    ]


def answered(samples: Samples) -> dict[int, float]:
    """Requests each worker answered, by pid (the metrics' own requests left out)."""
    return {
        int(labels["pid"]): value
        for name, labels, value in samples
        if name == "almanac_process_requests"
    }


def total(samples: Samples, name: str, **labels: str) -> float:
    return sum(
        value
        for sample, found, value in samples
        if sample == name and labels.items() <= found.items()
    )


def answered_by(served: Served, send: Callable[[], T]) -> tuple[int, T]:
    """Which worker answered the request `send` makes (on a connection of its own), by the
    one count that moves."""
    before = answered(scrape(served))
    response = send()
    after = poll(
        lambda: answered(scrape(served)), lambda now: sum(now.values()) > sum(before.values())
    )
    [pid] = [pid for pid, count in after.items() if count > before.get(pid, 0)]
    return pid, response


def description(served: Served) -> str:
    response = httpx.post(f"{served.url}/graphql", json=READ, timeout=30)
    described: str = response.json()["data"]["benchmark"]["description"]
    return described


def test_two_workers_serve_one_data_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # where the server makes its metrics' directory
    with almanac_process("--workers", "2", shutdown_drain_seconds="0", **UNREFUSING) as served:
        workers = poll(
            lambda: {int(found[1]) for line in served.log if (found := STARTED.search(line))},
            lambda pids: len(pids) == 2,
        )
        assert any("Budgets are per worker without ALMANAC_REDIS_URL" in ln for ln in served.log)
        assert len(list(tmp_path.glob("almanac-metrics-*"))) == 1

        # Both answer requests: sent ten at once, each on a connection of its own. (Before
        # them, the start's one /healthz, counted once it is folded in.)
        before = answered(
            poll(lambda: scrape(served), lambda now: total(now, "almanac_process_requests") == 1)
        )
        sent = 0

        def spread() -> dict[int, float]:
            nonlocal sent
            with ThreadPoolExecutor(10) as pool:
                for described in pool.map(lambda _: description(served), range(10)):
                    assert described != DESCRIPTION
            sent += 10
            return answered(scrape(served))

        by_worker = poll(
            spread,
            lambda now: all(now.get(pid, 0) > before.get(pid, 0) for pid in workers),
        )
        assert set(by_worker) == workers
        # /metrics, answered by one worker, counts the requests of both.
        poll(
            lambda: total(scrape(served), "almanac_request_seconds_count", operation="other"),
            lambda counted: counted == sent,
        )
        samples = scrape(served)
        assert total(samples, "almanac_data_version_known") == 1
        assert total(samples, "almanac_kept_answer_bytes") > 0

        # A write through one worker is seen by the other, which had kept the answer before.
        writer, written = answered_by(
            served,
            lambda: httpx.post(
                f"{served.url}/graphql",
                json=DESCRIBE,
                headers={"Authorization": f"Bearer {served.key}"},
                timeout=30,
            ),
        )
        assert written.json()["data"] == {"updateBenchmark": {"description": DESCRIPTION}}
        poll(
            lambda: answered_by(served, lambda: description(served)),
            lambda seen: seen[0] != writer and seen[1] == DESCRIPTION,
        )

        # A worker that dies is replaced, and its live gauges go; what it counted still counts.
        counted = total(scrape(served), "almanac_request_seconds_count")
        os.kill(writer, signal.SIGKILL)
        after = poll(
            lambda: scrape(served),
            lambda now: writer not in answered(now) and len(answered(now)) == 2,
        )
        assert total(after, "almanac_request_seconds_count") >= counted

        served.process.send_signal(signal.SIGTERM)
        served.process.wait(timeout=60)
    assert list(tmp_path.glob("almanac-metrics-*")) == []


def test_the_metrics_port_serves_every_worker() -> None:
    port = free_port()
    with almanac_process(
        "--workers", "2", shutdown_drain_seconds="0", metrics_port=str(port)
    ) as served:
        assert httpx.get(f"{served.url}/metrics").status_code == 404
        # Served by the command that runs the workers: both are there (from their start).
        poll(
            lambda: answered(scrape(f"http://127.0.0.1:{port}")),
            lambda by_worker: len(by_worker) == 2,
        )
