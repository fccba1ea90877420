"""Who reported a score (resolvers.reporting), possible contamination and headroom."""

from typing import Any

import pytest

from resolvers.ceiling import ceiling_of, headroom, near_ceiling
from resolvers.contamination import released_after_test_set, when_test_set_published
from resolvers.leaderboards import Row
from resolvers.reporting import ReportFilter, reported_entries, self_reported

QWEN = {"slug": "qwen", "name": "Qwen"}


def benchmark(**fields: Any) -> Any:
    return {
        "made_by": QWEN,
        "source": {"name": "Official leaderboard", "url": None, "kind": "BENCHMARK_MAINTAINER"},
        "released_on": "2023-09",
        "ceiling": None,
        "metric": {"name": "Accuracy", "unit": "PERCENT", "higher_is_better": True},
        **fields,
    }


def model(lab: dict[str, str] | None, released_on: str | None = None) -> Any:
    return {"slug": "m", "name": "M", "aliases": [], "lab": lab, "released_on": released_on}


def entry(score: float = 50.0, **more: Any) -> Any:
    return {
        "model_name": "M",
        "setting": None,
        "score": score,
        "source": None,
        "published_on": None,
        **more,
    }


@pytest.mark.parametrize(
    ("source", "override", "lab", "expected"),
    [
        ("BENCHMARK_MAINTAINER", None, QWEN, True),  # the maker's board, the maker's model
        ("BENCHMARK_MAINTAINER", None, {"slug": "google", "name": "Google"}, False),
        ("BENCHMARK_MAINTAINER", None, None, None),  # the model's lab is unknown
        ("BENCHMARK_MAINTAINER", "THIRD_PARTY", QWEN, False),  # the entry says otherwise
        ("THIRD_PARTY", None, QWEN, False),
        ("ALMANAC", None, QWEN, False),
        ("MODEL_DEVELOPER", None, QWEN, None),  # which lab wrote the report is not recorded
        (None, None, QWEN, None),  # who reported it is unknown
    ],
)
def test_self_reported(
    source: str | None, override: str | None, lab: Any, expected: bool | None
) -> None:
    board = benchmark(source={"name": "S", "url": None, "kind": source})
    assert self_reported(entry(reported_by=override), model(lab), board) is expected


def test_a_lab_report_is_self_reported_for_its_own_models() -> None:
    report = benchmark(
        source={"name": "Report", "url": None, "kind": "MODEL_DEVELOPER", "lab": QWEN}
    )
    assert self_reported(entry(), model(QWEN), report) is True
    # A row the entry says came from the benchmark's own board: its maker's (Qwen's too).
    assert self_reported(entry(reported_by="BENCHMARK_MAINTAINER"), model(QWEN), report) is True
    assert self_reported(entry(), model({"slug": "x", "name": "X"}), report) is False


def test_the_filter_keeps_the_kinds_asked_for_and_drops_self_reports() -> None:
    board = benchmark()
    tracked = {"m": model(QWEN)}
    entries = [
        entry(1.0),
        {**entry(2.0), "model_name": "Other"},
        {**entry(3.0, reported_by="THIRD_PARTY"), "model_name": "Third"},
    ]
    kept = reported_entries(entries, board, tracked, ReportFilter(kinds={"THIRD_PARTY"}))
    assert [e["score"] for e in kept] == [3.0]
    kept = reported_entries(entries, board, tracked, ReportFilter(exclude_self_reported=True))
    assert [e["score"] for e in kept] == [2.0, 3.0]  # "Other" is untracked: unknown, kept


@pytest.mark.parametrize(
    ("released", "expected"),
    [("2023-10", True), ("2023-08", False), ("2023-09", None), (None, None)],
)
def test_released_after_the_test_set(released: str | None, expected: bool | None) -> None:
    assert released_after_test_set(model(QWEN, released), benchmark()) is expected


def test_the_test_set_date_is_its_own_else_the_release_month() -> None:
    assert when_test_set_published(benchmark()) == "2023-09"
    assert when_test_set_published(benchmark(test_set_published_on="2024-02")) == "2024-02"
    assert (
        released_after_test_set(model(QWEN, "2023-12"), benchmark(test_set_published_on="2024-02"))
        is False
    )


def leader(score: float, **more: Any) -> Row:
    return Row(rank=1, model_name="M", model=None, entry=entry(score, **more))


def test_headroom_to_a_stored_ceiling_and_to_the_end_of_the_scale() -> None:
    assert headroom(benchmark(ceiling=85.0), leader(82.8)) == 2.2
    assert near_ceiling(benchmark(ceiling=85.0), leader(82.8)) is False
    assert headroom(benchmark(), leader(82.8)) == 17.2  # PERCENT: 100
    # An interval that reaches the ceiling is near it.
    reaching = leader(82.8, interval={"low": 80.0, "high": 86.0, "level": 0.95})
    assert near_ceiling(benchmark(ceiling=85.0), reaching) is True
    assert headroom(benchmark(ceiling=85.0), leader(90.0)) == -5.0  # past it


def test_headroom_where_lower_is_better_and_without_a_ceiling() -> None:
    errors = benchmark(metric={"name": "Error rate", "unit": "PERCENT", "higher_is_better": False})
    assert ceiling_of(errors) == 0.0
    assert headroom(errors, leader(3.5)) == 3.5
    assert near_ceiling(errors, leader(3.5, standard_error=2.0)) is True  # 3.5 - 3.92 < 0
    elo = benchmark(metric={"name": "Rating", "unit": "ELO", "higher_is_better": True})
    assert (headroom(elo, leader(1300.0)), near_ceiling(elo, leader(1300.0))) == (None, None)
    assert headroom(benchmark(), None) is None


def test_a_leader_exactly_at_the_ceiling_is_near_it_with_no_headroom() -> None:
    assert (
        headroom(benchmark(ceiling=85.0), leader(85.0)),
        near_ceiling(benchmark(ceiling=85.0), leader(85.0)),
    ) == (0.0, True)
    errors = benchmark(metric={"name": "Error rate", "unit": "PERCENT", "higher_is_better": False})
    assert (headroom(errors, leader(0.0)), near_ceiling(errors, leader(0.0))) == (0.0, True)
    # Lower is better: a leader above the ceiling, its interval short of it, is not near it.
    assert near_ceiling(errors, leader(3.5)) is False
    assert near_ceiling(errors, leader(3.5, standard_error=1.0)) is False  # 3.5 - 1.96 > 0


def test_a_stored_ceiling_of_0_is_a_ceiling() -> None:
    """On a scale of the benchmark's own, lower better: 0 as stored, not "unknown"."""
    metric = {"name": "Seconds", "unit": "POINTS", "higher_is_better": False}
    seconds = benchmark(ceiling=0.0, metric=metric)
    assert ceiling_of(seconds) == 0.0
    assert (headroom(seconds, leader(12.5)), near_ceiling(seconds, leader(12.5))) == (12.5, False)
    # A stored ceiling that is not 0, lower better: the distance above it.
    assert headroom(benchmark(ceiling=2.0, metric=metric), leader(12.5)) == 10.5


def test_headroom_is_given_to_nine_decimal_places() -> None:
    assert headroom(benchmark(), leader(99.99999999994)) == 0.0  # 6e-11: float noise
    assert headroom(benchmark(), leader(99.999999994)) == 6e-9


def test_a_computed_interval_reaching_the_ceiling_is_near_it() -> None:
    """A PERCENT score with only a sample size: its Wilson interval (97 of 100: up to 99.0)."""
    assert near_ceiling(benchmark(ceiling=98.0), leader(97.0, sample_size=100)) is True
    assert near_ceiling(benchmark(ceiling=98.0), leader(97.0)) is False


@pytest.mark.parametrize(
    ("board", "reported", "expected"),
    [
        # No source: who reported it is unknown.
        (benchmark(source=None), None, None),
        (benchmark(source=None), "THIRD_PARTY", False),
        # The maintainer's board of a benchmark whose maker is unknown.
        (benchmark(made_by=None), None, None),
        # A lab's report named by an entry of a board with another kind: which lab is unknown.
        (
            benchmark(
                source={"name": "S", "url": None, "kind": "BENCHMARK_MAINTAINER", "lab": QWEN}
            ),
            "MODEL_DEVELOPER",
            None,
        ),
    ],
)
def test_self_reported_where_the_reporter_is_unknown(
    board: Any, reported: str | None, expected: bool | None
) -> None:
    assert self_reported(entry(reported_by=reported), model(QWEN), board) is expected
