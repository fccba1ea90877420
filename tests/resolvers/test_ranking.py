"""Rank ranges, ties and leaders (resolvers.ranking), as properties over any leaderboard."""

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from resolvers.leaderboards import leaderboard
from resolvers.ranking import Board, RankRange, could_lead, rank_ranges

scores = st.floats(min_value=0, max_value=100, allow_nan=False).map(lambda s: round(s, 1))
widths = st.floats(min_value=0, max_value=20, allow_nan=False)


@st.composite
def intervals(draw: st.DrawFn) -> list[tuple[float, float]]:
    """Rows as (low, high) around a score; some points, some shared scores."""
    count = draw(st.integers(min_value=1, max_value=12))
    pool = draw(st.lists(scores, min_size=1, max_size=4))
    rows = []
    for _ in range(count):
        score = draw(st.sampled_from(pool) | scores)
        below, above = draw(widths), draw(widths)
        rows.append((score - below, score + above))
    return rows


def ordered(rows: list[tuple[float, float]], scores_of: list[float]) -> list[int]:
    """The rows' places, best score first (as the leaderboard orders them)."""
    order = sorted(range(len(rows)), key=lambda index: -scores_of[index])
    return [order.index(index) + 1 for index in range(len(rows))]


@given(st.data())
def test_a_rank_range_contains_the_rank(data: st.DataObject) -> None:
    found = data.draw(st.lists(scores, min_size=1, max_size=12))
    spread = data.draw(
        st.lists(st.tuples(widths, widths), min_size=len(found), max_size=len(found))
    )
    rows = [(score - low, score + high) for score, (low, high) in zip(found, spread, strict=True)]
    ranges = rank_ranges(rows, higher_is_better=True)
    for rank, place in zip(ordered(rows, found), ranges, strict=True):
        assert place.best <= rank <= place.worst
        assert 1 <= place.best <= place.worst <= len(rows)


@given(st.lists(scores, min_size=1, max_size=12))
def test_points_with_a_shared_score_share_a_range(found: list[float]) -> None:
    ranges = rank_ranges([(score, score) for score in found], higher_is_better=True)
    for score, place in zip(found, ranges, strict=True):
        above = sum(1 for other in found if other > score)
        same = sum(1 for other in found if other == score)
        assert place == RankRange(best=above + 1, worst=above + same)


@given(st.data())
def test_a_row_tied_on_score_with_the_leader_shares_its_best_rank(data: st.DataObject) -> None:
    found = data.draw(st.lists(scores, min_size=1, max_size=12))
    spread = data.draw(
        st.lists(st.tuples(widths, widths), min_size=len(found), max_size=len(found))
    )
    rows = [(score - low, score + high) for score, (low, high) in zip(found, spread, strict=True)]
    top = max(found)
    tied = (top - data.draw(widths), top + data.draw(widths))  # the leader's score, any interval
    ranges = rank_ranges([*rows, tied], higher_is_better=True)
    leader = found.index(top)
    assert ranges[leader].best == ranges[-1].best == 1
    assert {leader, len(rows)} <= set(could_lead(ranges))


@given(st.data())
def test_widening_intervals_never_narrows_a_range(data: st.DataObject) -> None:
    rows = data.draw(intervals())
    wider = [(low - data.draw(widths), high + data.draw(widths)) for low, high in rows]
    for narrow, wide in zip(
        rank_ranges(rows, higher_is_better=True),
        rank_ranges(wider, higher_is_better=True),
        strict=True,
    ):
        assert wide.best <= narrow.best
        assert wide.worst >= narrow.worst


@given(intervals())
def test_lower_is_better_mirrors_higher_is_better(rows: list[tuple[float, float]]) -> None:
    mirrored = [(-high, -low) for low, high in rows]
    assert rank_ranges(mirrored, higher_is_better=False) == rank_ranges(rows, higher_is_better=True)


def test_two_tied_points_on_top_are_both_first_to_second() -> None:
    assert rank_ranges([(82.8, 82.8), (82.8, 82.8), (74.1, 74.1)], higher_is_better=True) == [
        RankRange(1, 2),
        RankRange(1, 2),
        RankRange(3, 3),
    ]


def test_the_board_names_the_leaders_and_the_tracked_leaders() -> None:
    qwen: dict[str, Any] = {
        "slug": "qwen-14b",
        "name": "Qwen-14B",
        "aliases": [],
        "lab": None,
        "released_on": None,
        "capability_index_rank": None,
        "revision": 1,
        "updated_by": "t",
        "updated_at": "2026-11-12T00:00:00Z",
    }
    glm = {**qwen, "slug": "chatglm3-6b", "name": "ChatGLM3-6B"}
    entries = [
        entry("GPT-4", 82.8),
        entry("Qwen-72B-Chat", 82.8),
        entry("Qwen-14B", 65.5, interval={"low": 60.0, "high": 70.0, "level": 0.95}),
        entry("ChatGLM3-6B", 62.1),
    ]
    tracked = {"qwen-14b": qwen, "chatglm3-6b": glm}
    rows = leaderboard(entries, higher_is_better=True, tracked=tracked)  # type: ignore[arg-type]
    board = Board(rows, unit="PERCENT", higher_is_better=True)
    assert [row.model_name for row in board.leaders()] == ["GPT-4", "Qwen-72B-Chat"]
    assert [board.tied_with_leader(row) for row in rows] == [False, True, False, False]
    # Among the tracked rows only, ChatGLM3-6B's 62.1 lies within Qwen-14B's 60-70.
    assert [row.model_name for row in board.tracked_leaders()] == ["Qwen-14B", "ChatGLM3-6B"]


def entry(name: str, score: float, **more: object) -> dict[str, object]:
    return {
        "model_name": name,
        "setting": None,
        "score": score,
        "source": None,
        "published_on": None,
        **more,
    }
