"""Rules 2-8: best per model, order and ranks, leaders, counts and the figures of the page."""

from resolvers.leaderboards import (
    last_model_added,
    leader,
    leaderboard,
    scores_over_time,
    standing,
    strongest_model_tested,
    tracked_leader,
    tracked_model_count,
)
from resolvers.tracking import index_by_key
from store.documents import Date, DateTime, EntryDoc, ModelDoc, YearMonth


def model(
    name: str, *aliases: str, released: str | None = None, rank: int | None = None
) -> ModelDoc:
    return {
        "slug": name.lower(),
        "name": name,
        "aliases": list(aliases),
        "lab": None,
        "released_on": YearMonth(released) if released else None,
        "capability_index_rank": rank,
        "revision": 1,
        "updated_by": "test",
        "updated_at": DateTime("2026-11-12T00:00:00Z"),
    }


def entry(name: str, score: float, setting: str | None = None, on: str | None = None) -> EntryDoc:
    return {
        "model_name": name,
        "setting": setting,
        "score": score,
        "source": "Official leaderboard",
        "published_on": Date(on) if on else None,
    }


QWEN = model("Qwen-14B", "Qwen-14B-Chat", released="2023-09", rank=213)
GLM = model("ChatGLM3-6B", released="2023-10")
TRACKED = index_by_key([QWEN, GLM])


def board(*entries: EntryDoc, higher_is_better: bool = True) -> list[tuple[int, str, float]]:
    rows = leaderboard(entries, higher_is_better=higher_is_better, tracked=TRACKED)
    return [(row.rank, row.model_name, row.entry["score"]) for row in rows]


def test_one_row_per_model_keeping_its_best_setting() -> None:
    rows = leaderboard(
        [
            entry("Qwen-14B-Chat", 60.0, "harness A"),
            entry("qwen-14b", 65.5, "harness B"),
            entry("Qwen-14B-Chat", 61.0, "harness C"),
            entry("Mystery-7B", 50.0, "x"),
            entry("Mystery-7B", 55.0, "y"),
        ],
        higher_is_better=True,
        tracked=TRACKED,
    )
    assert [(r.model_name, r.entry["score"], r.entry["setting"]) for r in rows] == [
        ("Qwen-14B", 65.5, "harness B"),
        ("Mystery-7B", 55.0, "y"),
    ]
    assert [r.tracked for r in rows] == [True, False]


def test_ties_by_name_with_distinct_consecutive_ranks() -> None:
    assert board(
        entry("Qwen-72B-Chat", 82.8),
        entry("GPT-4 (snapshot unspecified)", 82.8),
        entry("Qwen-14B-Chat", 65.5),
        entry("Qwen-1.8B-Chat", 65.5),
        entry("InternLM-20B-Chat", 65.5),
    ) == [
        (1, "GPT-4 (snapshot unspecified)", 82.8),
        (2, "Qwen-72B-Chat", 82.8),
        (3, "InternLM-20B-Chat", 65.5),
        (4, "Qwen-1.8B-Chat", 65.5),
        (5, "Qwen-14B", 65.5),  # Ordered by the almanac's name, which the page shows.
    ]


def test_lower_is_better_metrics_rank_the_lowest_first() -> None:
    assert board(entry("A", 3.0), entry("B", 1.0), entry("B", 2.0), higher_is_better=False) == [
        (1, "B", 1.0),
        (2, "A", 3.0),
    ]


def test_equal_scores_keep_the_newest_entry_whatever_the_storage_order() -> None:
    older, newer = (
        entry("Mystery", 50.0, "v1", "2023-01-01"),
        entry("Mystery", 50.0, "v2", "2024-01-01"),
    )
    for entries in ([older, newer], [newer, older]):
        (row,) = leaderboard(entries, higher_is_better=True, tracked=TRACKED)
        assert row.entry["setting"] == "v2"


def test_leaders_and_counts() -> None:
    rows = leaderboard(
        [entry("GPT-4", 82.8), entry("ChatGLM3-6B", 62.1), entry("Qwen-14B-Chat", 65.5)],
        higher_is_better=True,
        tracked=TRACKED,
    )
    top, best_tracked = leader(rows), tracked_leader(rows)
    assert top is not None
    assert top.model_name == "GPT-4"
    assert best_tracked is not None
    assert best_tracked.model_name == "Qwen-14B"
    assert tracked_model_count(rows) == 2
    assert strongest_model_tested(rows) is QWEN
    assert last_model_added(rows) is GLM


def test_figures_of_an_untracked_or_empty_board_are_empty() -> None:
    rows = leaderboard([entry("GPT-4", 82.8)], higher_is_better=True, tracked=TRACKED)
    assert tracked_leader(rows) is None
    assert strongest_model_tested(rows) is None
    assert last_model_added(rows) is None
    assert leader([]) is None
    only_unranked = leaderboard([entry("ChatGLM3-6B", 1.0)], higher_is_better=True, tracked=TRACKED)
    assert strongest_model_tested(only_unranked) is None


def test_scores_over_time_keeps_every_result() -> None:
    points = scores_over_time(
        [
            entry("Qwen-14B-Chat", 61.0, "b", "2024-02-01"),
            entry("Qwen-14B-Chat", 60.0, "a", "2023-12-06"),
            entry("GPT-4", 82.8, "a", "2023-12-06"),
            entry("Undated", 10.0),
        ],
        tracked=TRACKED,
    )
    assert [(p.date, p.model_name, p.score, p.tracked) for p in points] == [
        ("2023-12-06", "GPT-4", 82.8, False),
        ("2023-12-06", "Qwen-14B", 60.0, True),
        ("2024-02-01", "Qwen-14B", 61.0, True),
        (None, "Undated", 10.0, False),
    ]


def test_equal_scores_on_the_same_day_keep_the_last_setting_by_name() -> None:
    """The tie-break after the date is the setting's name, so storage order never decides."""
    first, second = (
        entry("Mystery", 50.0, "harness A", "2024-01-01"),
        entry("Mystery", 50.0, "harness B", "2024-01-01"),
    )
    for entries in ([first, second], [second, first]):
        (row,) = leaderboard(entries, higher_is_better=True, tracked=TRACKED)
        assert row.entry["setting"] == "harness B"
    undated = [
        entry("Mystery", 50.0, "b"),
        entry("Mystery", 50.0, None),
        entry("Mystery", 50.0, "a"),
    ]
    for entries in (undated, undated[::-1]):
        (row,) = leaderboard(entries, higher_is_better=True, tracked=TRACKED)
        assert row.entry["setting"] == "b"


def test_a_better_score_wins_over_a_newer_one() -> None:
    newer_worse = entry("Mystery", 40.0, "z", "2025-01-01")
    older_better = entry("Mystery", 50.0, "a", "2020-01-01")
    for entries in ([newer_worse, older_better], [older_better, newer_worse]):
        (row,) = leaderboard(entries, higher_is_better=True, tracked=TRACKED)
        assert row.entry["score"] == 50.0
        (low,) = leaderboard(entries, higher_is_better=False, tracked=TRACKED)
        assert low.entry["score"] == 40.0


def test_ties_are_ordered_by_name_ignoring_case() -> None:
    assert board(
        entry("zeta-7B", 70.0),
        entry("Beta-7B", 70.0),
        entry("alpha-7B", 70.0),
        entry("Gamma-7B", 71.0),
    ) == [
        (1, "Gamma-7B", 71.0),
        (2, "alpha-7B", 70.0),
        (3, "Beta-7B", 70.0),
        (4, "zeta-7B", 70.0),
    ]


def test_a_tracked_model_and_an_untracked_name_are_never_one_row() -> None:
    """A tracked model's slug may read like another model's name: each keeps its own row."""
    acme = model("Acme Mystery")
    acme["slug"] = "mystery"
    tracked = index_by_key([acme])
    rows = leaderboard(
        [entry("Acme Mystery", 60.0), entry("Mystery", 50.0)],
        higher_is_better=True,
        tracked=tracked,
    )
    assert [(row.model_name, row.tracked) for row in rows] == [
        ("Acme Mystery", True),
        ("Mystery", False),
    ]


def test_a_missing_setting_loses_a_tie_to_any_named_one() -> None:
    named, unnamed = entry("Mystery", 50.0, "A"), entry("Mystery", 50.0, None)
    for entries in ([named, unnamed], [unnamed, named]):
        (row,) = leaderboard(entries, higher_is_better=True, tracked=TRACKED)
        assert row.entry["setting"] == "A"


def test_a_model_absent_from_the_leaderboard_has_no_standing() -> None:
    rows = leaderboard([entry("Qwen-14B", 60.0)], higher_is_better=True, tracked=TRACKED)
    assert standing(rows, "chatglm3-6b") is None
    found = standing(rows, "qwen-14b")
    assert found is not None
    assert (found.leads, found.leads_tracked_models) == (True, True)


def test_the_strongest_model_tested_is_the_best_ranked_whatever_the_order() -> None:
    strong, weak = model("Strong", rank=3), model("Weak", rank=40)
    for models in ([strong, weak], [weak, strong]):
        tracked = index_by_key(models)
        rows = leaderboard(
            [entry(m["name"], 50.0 + i) for i, m in enumerate(models)],
            higher_is_better=True,
            tracked=tracked,
        )
        assert strongest_model_tested(rows) is strong
