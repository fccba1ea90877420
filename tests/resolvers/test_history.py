"""What a read changed, and which results count as recorded (pure rules)."""

from typing import Any

from resolvers.history import (
    changes_by_read,
    is_recorded,
    read_as_of,
    read_changes,
    results_ever_recorded,
    same_entries,
)
from resolvers.tracking import index_by_key
from store.documents import Date, DateTime, EntryDoc, ModelDoc, ReadDoc


def entry(name: str, score: float, setting: str | None = "v1", on: str = "2026-01-01") -> EntryDoc:
    return {
        "model_name": name,
        "setting": setting,
        "score": score,
        "source": None,
        "published_on": Date(on),
    }


def read(on: str, *entries: EntryDoc) -> ReadDoc:
    return {
        "revision": 1,
        "read_on": Date(on),
        "recorded_by": "test",
        "recorded_at": DateTime(f"{on}T00:00:00Z"),
        "entries": list(entries),
    }


def test_rows_match_by_model_and_setting_ignoring_case_and_spaces() -> None:
    changes = read_changes(
        [entry("Qwen", 50), entry("GPT-4", 80), entry("Old", 10)],
        [entry(" qwen ", 55), entry("GPT-4", 80), entry("GPT-4", 81, setting="v2")],
        {},
    )
    assert [e["model_name"] for e in changes.added] == ["GPT-4"]
    assert changes.added[0]["setting"] == "v2"
    assert [e["model_name"] for e in changes.removed] == ["Old"]
    assert [(c.before["score"], c.after["score"]) for c in changes.changed] == [(50, 55)]


def test_the_first_read_adds_every_row() -> None:
    history = [read("2026-01-02", entry("A", 1), entry("B", 2)), read("2026-01-03", entry("A", 1))]
    first, second = changes_by_read(history, {})
    assert len(first.added) == 2
    assert not first.removed
    assert not second.added
    assert [e["model_name"] for e in second.removed] == ["B"]


def test_the_same_read_is_recognised_whatever_the_row_order() -> None:
    rows = [entry("A", 1), entry("B", 2)]
    assert same_entries(rows, rows[::-1])
    assert not same_entries(rows, [entry("A", 1), entry("B", 2.5)])
    history = [read("2026-01-02", *rows)]
    assert is_recorded(history, "2026-01-02", rows[::-1])
    assert not is_recorded(history, "2026-01-03", rows)


def test_a_result_read_again_counts_once_and_a_rescore_counts_again() -> None:
    history = [
        read("2026-01-02", entry("A", 1), entry("B", 2)),
        read("2026-01-03", entry("A", 1), entry("B", 3, on="2026-01-03")),
    ]
    results = results_ever_recorded(history, {})
    assert [(e["model_name"], e["score"]) for e in results] == [("A", 1), ("B", 2), ("B", 3)]


def test_the_read_as_of_a_day_is_the_last_on_or_before_it() -> None:
    history: list[Any] = [
        {"read_on": "2026-11-01", "entries": []},
        {"read_on": "2026-11-10", "entries": []},
        {"read_on": "2026-11-10", "entries": [{"n": 1}]},
        {"read_on": "2026-11-20", "entries": []},
    ]
    assert read_as_of(history, "2026-10-31") is None
    assert read_as_of(history, "2026-11-01") is history[0]
    assert read_as_of(history, "2026-11-15") is history[2]  # the later of one day's reads
    assert read_as_of(history, "2026-12-01") is history[3]
    assert read_as_of([], "2026-11-15") is None


QWEN: ModelDoc = {
    "slug": "qwen-14b",
    "name": "Qwen-14B",
    "aliases": ["Qwen-14B-Chat"],
    "lab": None,
    "released_on": None,
    "capability_index_rank": None,
    "revision": 1,
    "updated_by": "test",
    "updated_at": DateTime("2026-01-01T00:00:00Z"),
}


def test_a_tracked_model_is_the_same_row_under_any_of_its_names() -> None:
    tracked = index_by_key([QWEN])
    changes = read_changes(
        [entry("Qwen-14B-Chat", 65.5), entry("Other", 10)],
        [entry("Qwen-14B", 65.5), entry("Other", 10), entry("New", 1)],
        tracked,
    )
    assert [e["model_name"] for e in changes.added] == ["New"]
    assert changes.removed == []
    assert changes.changed == []
    history = [
        read("2026-01-02", entry("Qwen-14B-Chat", 65.5)),
        read("2026-01-03", entry("qwen-14b", 65.5)),
    ]
    assert len(results_ever_recorded(history, tracked)) == 1
    assert len(results_ever_recorded(history, {})) == 2  # untracked, they are two names


def test_a_read_differing_in_any_value_of_a_row_is_not_the_same_read() -> None:
    """Every value a row keeps counts, a missing one unlike any given one."""
    base = {**entry("A", 1), "source": "Paper", "note": "as printed"}
    for field in ("setting", "source", "published_on", "note"):
        for before, after in ((None, "XXXX"), ("XXXX", None), ("first", "second")):
            one, other = {**base, field: before}, {**base, field: after}
            assert not same_entries([one], [other]), (field, before, after)  # type: ignore[list-item]


def test_a_missing_setting_is_no_setting_named_like_a_placeholder() -> None:
    changes = read_changes([entry("A", 1, setting=None)], [entry("A", 1, setting="XXXX")], {})
    assert len(changes.added) == len(changes.removed) == 1


def test_a_result_published_again_on_another_day_is_another_result() -> None:
    history = [
        read("2026-01-02", entry("A", 50, on="2026-01-01")),
        read("2026-01-03", entry("A", 50, on="2026-01-02")),
    ]
    assert [e["published_on"] for e in results_ever_recorded(history, {})] == [
        "2026-01-01",
        "2026-01-02",
    ]
