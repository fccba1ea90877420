"""Intervals as published, or computed from a standard error or a sample size."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from resolvers.ranking import RankRange, rank_ranges
from resolvers.uncertainty import Interval, bounds, interval_of, wilson_interval


def entry(score: float, **more: object) -> dict[str, object]:
    return {
        "model_name": "m",
        "setting": None,
        "score": score,
        "source": None,
        "published_on": None,
        **more,
    }


@pytest.mark.parametrize(
    ("share", "size", "low", "high"),
    [
        # Published references: Wilson (1927) via Newcombe (1998), table I, and the
        # textbook p = 0.5, n = 100 case.
        (0.5, 100, 0.4038, 0.5962),
        (81 / 263, 263, 0.2553, 0.3662),  # Newcombe 1998, example (a): 81/263
        (15 / 148, 148, 0.0624, 0.1605),  # example (b): 15/148
        (0.0, 20, 0.0, 0.1611),  # example (c): 0/20
        (1 / 29, 29, 0.0061, 0.1718),  # example (d): 1/29
    ],
)
def test_wilson_intervals_match_published_values(
    share: float, size: int, low: float, high: float
) -> None:
    found = wilson_interval(share, size)
    assert found == pytest.approx((low, high), abs=5e-5)


def test_a_percent_score_with_a_sample_size_gets_the_wilson_interval() -> None:
    found = interval_of(entry(50.0, sample_size=100), "PERCENT")  # type: ignore[arg-type]
    assert found is not None
    assert (found.low, found.high) == pytest.approx((40.38, 59.62), abs=0.005)
    assert (found.level, found.computed) == (0.95, True)


def test_a_standard_error_gives_score_plus_minus_1_96_of_it() -> None:
    found = interval_of(entry(70.0, standard_error=2.0, sample_size=100), "PERCENT")  # type: ignore[arg-type]
    assert found == Interval(70.0 - 3.919928, 70.0 + 3.919928, 0.95, computed=True)


def test_a_published_interval_is_kept_as_published() -> None:
    published = {"low": 60.0, "high": 75.0, "level": 0.9}
    found = interval_of(entry(70.0, interval=published, standard_error=2.0), "PERCENT")  # type: ignore[arg-type]
    assert found == Interval(60.0, 75.0, 0.9, computed=False)


def test_a_sample_size_alone_gives_nothing_outside_percent() -> None:
    assert interval_of(entry(1200.0, sample_size=5000), "ELO") is None  # type: ignore[arg-type]
    assert interval_of(entry(70.0), "PERCENT") is None  # type: ignore[arg-type]


@given(
    st.integers(min_value=1, max_value=100_000).flatmap(
        lambda n: st.tuples(st.integers(min_value=0, max_value=n), st.just(n))
    )
)
def test_a_wilson_interval_holds_its_score(counts: tuple[int, int]) -> None:
    successes, size = counts
    score = 100 * successes / size
    found = interval_of(entry(score, sample_size=size), "PERCENT")  # type: ignore[arg-type]
    assert found is not None
    assert 0 <= found.low <= score <= found.high <= 100


def test_an_interval_of_no_width_is_a_point() -> None:
    """Published as a point, or a standard error of 0: the score at both ends, which ties
    with the same score and is surely above a lower one, as a point is."""
    point = entry(70.0, interval={"low": 70.0, "high": 70.0, "level": 0.95})
    assert interval_of(point, "PERCENT") == Interval(70.0, 70.0, 0.95, computed=False)  # type: ignore[arg-type]
    exact = entry(70.0, standard_error=0.0)
    assert interval_of(exact, "PERCENT") == Interval(70.0, 70.0, 0.95, computed=True)  # type: ignore[arg-type]
    ends = [bounds(row, "PERCENT") for row in (point, exact, entry(60.0))]  # type: ignore[arg-type]
    assert ends == [(70.0, 70.0), (70.0, 70.0), (60.0, 60.0)]
    assert rank_ranges(ends, higher_is_better=True) == [
        RankRange(1, 2),
        RankRange(1, 2),
        RankRange(3, 3),
    ]
