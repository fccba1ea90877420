"""The documents a change produces (editing.changes), checked function by function: the exact
refusals a reader sees, and the stamps and derived fields a stored document carries. Found by
mutation testing (docs/testing.md): each test pins a rule the HTTP tests left unchecked."""

import time
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import pytest

from editing.changes import (
    Catalog,
    Stamp,
    changed_benchmark,
    changed_model,
    check_room_for_category,
    utc_time,
    with_read,
    with_reads,
)
from editing.errors import InvalidInput, Problem
from editing.inputs import MAX_CATEGORIES, BenchmarkFields, ModelFields, ReadFields, parse
from store import BenchmarkDoc, CategoryDoc, LabDoc

STAMP = Stamp("editor", datetime(2026, 11, 12, 9, 30, tzinfo=UTC))
LABS: dict[str, LabDoc] = {"qwen": {"slug": "qwen", "name": "Qwen"}}
CATEGORIES: dict[str, CategoryDoc] = {"tool-use": {"slug": "tool-use", "name": "Tool use"}}
CATALOG = Catalog(labs=LABS, categories=CATEGORIES, parents={})
NEW: dict[str, Any] = {
    "name": "Tool Bench",
    "metric": {"name": "Accuracy", "unit": "PERCENT"},
    "category": "tool-use",
}


def refusals(error: pytest.ExceptionInfo[InvalidInput]) -> list[Problem]:
    return error.value.problems


def benchmark(**fields: Any) -> BenchmarkDoc:
    made = changed_benchmark(
        None, "tool-bench", BenchmarkFields.model_validate(NEW | fields), CATALOG, STAMP, {}
    )
    assert made is not None
    return made


@pytest.fixture
def local_zone_not_utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The machine's own time zone set away from UTC, so UTC must be asked for by name."""
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.usefixtures("local_zone_not_utc")
def test_a_moment_is_stored_in_utc_whatever_the_local_zone() -> None:
    east = datetime(2026, 11, 12, 11, 30, tzinfo=timezone(timedelta(hours=2)))
    assert utc_time(east) == "2026-11-12T09:30:00Z"


@pytest.mark.parametrize(
    ("fields", "location", "message"),
    [
        ({"made_by": "nobody"}, ("made_by",), "unknown lab 'nobody'"),
        ({"category": "cooking"}, ("category",), "unknown category 'cooking'"),
    ],
)
def test_an_unknown_reference_is_named_with_its_kind(
    fields: dict[str, Any], location: tuple[str, ...], message: str
) -> None:
    with pytest.raises(InvalidInput) as refused:
        changed_benchmark(
            None, "tool-bench", BenchmarkFields.model_validate(NEW | fields), CATALOG, STAMP, {}
        )
    assert refusals(refused) == [Problem(location, message)]


def test_every_refusal_of_a_change_is_reported_together() -> None:
    fields = {"made_by": "nobody", "category": "cooking", "parent": "nope"}
    with pytest.raises(InvalidInput) as refused:
        changed_benchmark(
            None, "tool-bench", BenchmarkFields.model_validate(NEW | fields), CATALOG, STAMP, {}
        )
    assert sorted(refusals(refused), key=lambda problem: problem.location) == [
        Problem(("category",), "unknown category 'cooking'"),
        Problem(("made_by",), "unknown lab 'nobody'"),
        Problem(("parent",), "unknown benchmark 'nope'"),
    ]


def read(names: list[str], on: str) -> ReadFields:
    rows = [{"model_name": name, "score": 50.0} for name in names]
    return ReadFields.model_validate({"read_on": on, "entries": rows})


def read_of(count: int) -> BenchmarkDoc:
    recorded = with_read(
        benchmark(), read([f"M{n}" for n in range(count)], "2026-11-01"), STAMP, {}
    )
    assert recorded is not None
    return recorded


GUIDANCE = (
    "send every row the source shows, or say it dropped them (`allowRemovals`; `allow_removals` "
    "in a file; `almanac import --allow-removals`)"
)


@pytest.mark.parametrize(
    ("rows", "named"),
    [
        (10, "'M0', 'M1', 'M2', 'M3', 'M4', 'M5', 'M6', 'M7', 'M8', 'M9'"),
        (11, "'M0', 'M1', 'M2', 'M3', 'M4', 'M5', 'M6', 'M7', 'M8', 'M9' and 1 more"),
        (12, "'M0', 'M1', 'M2', 'M3', 'M4', 'M5', 'M6', 'M7', 'M8', 'M9' and 2 more"),
    ],
)
def test_a_read_leaving_out_rows_names_the_first_ten(rows: int, named: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        with_read(read_of(rows), read([], "2026-11-02"), STAMP, {})
    message = f"leaves out {rows} rows of the current leaderboard ({named}): {GUIDANCE}"
    assert refusals(refused) == [Problem(("entries",), message)]


def test_a_source_lab_is_stored_by_slug_and_name() -> None:
    made = benchmark(source={"name": "Board", "lab": "qwen"})
    assert made["source"] is not None
    assert made["source"]["lab"] == {"slug": "qwen", "name": "Qwen"}


def test_an_unknown_source_lab_is_refused_where_it_was_given() -> None:
    with pytest.raises(InvalidInput) as refused:
        benchmark(source={"name": "Board", "lab": "nobody"})
    assert refusals(refused) == [Problem(("source", "lab"), "unknown lab 'nobody'")]


def test_a_track_position_is_kept_only_under_a_parent() -> None:
    family = Catalog(labs=LABS, categories=CATEGORIES, parents={"family": None})
    fields = BenchmarkFields.model_validate(NEW | {"parent": "family", "track_position": 3})
    track = changed_benchmark(None, "tool-bench", fields, family, STAMP, {})
    assert track is not None
    assert track["track_position"] == 3
    assert benchmark(track_position=3)["track_position"] is None


def test_a_read_before_the_latest_is_refused_and_one_on_the_same_day_is_kept() -> None:
    current = read_of(1)
    with pytest.raises(InvalidInput) as refused:
        with_read(current, read(["M0"], "2026-10-31"), STAMP, {})
    message = "2026-10-31 is before the latest read (2026-11-01); the history only grows"
    assert refusals(refused) == [Problem(("read_on",), message)]

    again = with_read(current, read(["M0", "M1"], "2026-11-01"), STAMP, {})
    assert again is not None
    assert [kept["read_on"] for kept in again["history"]] == ["2026-11-01", "2026-11-01"]


def scored(scores: list[float], on: str) -> ReadFields:
    rows = [{"model_name": f"M{n}", "score": score} for n, score in enumerate(scores)]
    return ReadFields.model_validate({"read_on": on, "entries": rows})


def test_every_read_is_checked_and_each_refusal_is_placed_in_its_read() -> None:
    reads = [scored([50, 150], "2026-11-02"), scored([50, 60], "2026-11-03")]
    reads += [scored([-1, 50], "2026-11-04")]
    with pytest.raises(InvalidInput) as refused:
        with_reads(read_of(2), reads, STAMP, {})
    assert refusals(refused) == [
        Problem(("reads", 0, "entries", 1, "score"), "150.0 is outside 0-100 for PERCENT"),
        Problem(("reads", 2, "entries", 0, "score"), "-1.0 is outside 0-100 for PERCENT"),
    ]


def test_a_read_after_a_refused_one_is_checked_as_if_that_one_were_recorded() -> None:
    reads = [scored([50, 150], "2026-11-05"), scored([50], "2026-11-04")]
    with pytest.raises(InvalidInput) as refused:
        with_reads(read_of(2), reads, STAMP, {})
    assert refusals(refused)[1:] == [
        Problem(("reads", 1, "entries"), refusals(refused)[1].message),
        Problem(
            ("reads", 1, "read_on"),
            "2026-11-04 is before the latest read (2026-11-05); the history only grows",
        ),
    ]
    assert "leaves out 1 rows of the current leaderboard ('M1')" in refusals(refused)[1].message


def test_reads_already_recorded_change_nothing_and_new_ones_are_recorded_in_turn() -> None:
    current = read_of(2)
    assert with_reads(current, [read(["M0", "M1"], "2026-11-01")], STAMP, {}) is None
    reads = [read(["M0", "M1"], "2026-11-01"), read(["M0", "M1"], "2026-11-03")]
    reads += [read(["M0", "M1", "M2"], "2026-11-04")]
    recorded = with_reads(current, reads, STAMP, {})
    assert recorded is not None
    assert [kept["read_on"] for kept in recorded["history"]] == [
        "2026-11-01",
        "2026-11-03",
        "2026-11-04",
    ]
    assert recorded["revision"] == current["revision"] + 2
    assert [row["model_name"] for row in recorded["entries"]] == ["M0", "M1", "M2"]


def test_a_model_of_an_unknown_lab_is_refused_with_its_kind() -> None:
    fields = ModelFields(name="Qwen3", lab="nobody")
    with pytest.raises(InvalidInput) as refused:
        changed_model(None, "qwen3", fields, LABS, {}, STAMP)
    assert refusals(refused) == [Problem(("lab",), "unknown lab 'nobody'")]


def test_a_missing_required_field_is_named() -> None:
    fields = BenchmarkFields.model_validate({k: v for k, v in NEW.items() if k != "name"})
    with pytest.raises(InvalidInput) as refused:
        changed_benchmark(None, "tool-bench", fields, CATALOG, STAMP, {})
    assert refusals(refused) == [Problem(("name",), "is required")]


def test_a_benchmark_named_as_its_own_parent_is_refused_at_parent() -> None:
    family = Catalog(labs=LABS, categories=CATEGORIES, parents={"tool-bench": None})
    fields = BenchmarkFields.model_validate(NEW | {"parent": "tool-bench"})
    with pytest.raises(InvalidInput) as refused:
        changed_benchmark(None, "tool-bench", fields, family, STAMP, {})
    assert refusals(refused) == [Problem(("parent",), "a benchmark cannot be its own parent")]


def test_a_category_past_the_most_is_refused_at_its_slug() -> None:
    known = {f"c{n}": CATEGORIES["tool-use"] for n in range(MAX_CATEGORIES)}
    with pytest.raises(InvalidInput) as refused:
        check_room_for_category(known)
    message = f"the almanac holds {MAX_CATEGORIES} categories, the most it may hold"
    assert refusals(refused) == [Problem(("slug",), message)]


def test_a_track_cannot_be_a_parent() -> None:
    family = Catalog(labs=LABS, categories=CATEGORIES, parents={"family": None, "track": "family"})
    fields = BenchmarkFields.model_validate(NEW | {"parent": "track"})
    with pytest.raises(InvalidInput) as refused:
        changed_benchmark(None, "tool-bench", fields, family, STAMP, {})
    message = "'track' is itself a track; tracks do not nest"
    assert refusals(refused) == [Problem(("parent",), message)]


def test_aliases_sent_as_null_are_stored_empty() -> None:
    made = changed_model(None, "qwen3", ModelFields(name="Qwen3", aliases=None), LABS, {}, STAMP)
    assert made is not None
    assert made["aliases"] == []


def test_an_interval_is_checked_at_both_ends_against_the_range() -> None:
    rows = [
        {"model_name": "M0", "score": 50.0, "interval": {"low": -5.0, "high": 104.0}},
        {"model_name": "M1", "score": 50.0, "interval": {"low": 0.0, "high": 100.0}},
    ]
    sent = ReadFields.model_validate({"read_on": "2026-11-01", "entries": rows})
    with pytest.raises(InvalidInput) as refused:
        with_read(benchmark(), sent, STAMP, {})
    assert refusals(refused) == [
        Problem(("entries", 0, "interval", "low"), "-5.0 is outside 0-100 for PERCENT"),
        Problem(("entries", 0, "interval", "high"), "104.0 is outside 0-100 for PERCENT"),
    ]


def test_a_unit_its_scores_no_longer_fit_is_refused_at_the_unit() -> None:
    """Scores kept in the history are refused by the unit that would make them wrong, the
    ceiling and the model card reports each at their own field."""
    points = {"name": "Accuracy", "unit": "POINTS"}
    reports = [{"model_name": "M0", "score": 50.0}, {"model_name": "M1", "score": 120.0}]
    current = benchmark(metric=points, ceiling=300.0, model_card_reports=reports)
    rows = [
        {"model_name": "M0", "score": 50.0},
        {"model_name": "M1", "score": 150.0, "interval": {"low": 140.0, "high": 160.0}},
    ]
    sent = ReadFields.model_validate({"read_on": "2026-11-01", "entries": rows})
    recorded = with_read(current, sent, STAMP, {})
    assert recorded is not None
    percent = BenchmarkFields.model_validate({"metric": NEW["metric"]})
    with pytest.raises(InvalidInput) as refused:
        changed_benchmark(recorded, "tool-bench", percent, CATALOG, STAMP, {})
    outside = "is outside 0-100 for PERCENT"
    assert refusals(refused) == [
        Problem(("metric", "unit"), f"150.0 {outside}"),
        Problem(("metric", "unit"), f"140.0 {outside}"),
        Problem(("metric", "unit"), f"160.0 {outside}"),
        Problem(("ceiling",), f"300.0 {outside}"),
        Problem(("model_card_reports", 1, "score"), f"120.0 {outside}"),
    ]


def test_a_spelling_a_model_repeats_names_the_one_it_repeats() -> None:
    fields = ModelFields(name="Qwen3", aliases=["Qwen 3", "QWEN3", "qwen 3"])
    with pytest.raises(InvalidInput) as refused:
        changed_model(None, "qwen3", fields, LABS, {}, STAMP)
    assert refusals(refused) == [
        Problem(("aliases", 1), "'QWEN3' repeats name"),
        Problem(("aliases", 2), "'qwen 3' repeats aliases.0"),
    ]


def test_a_repeated_row_names_the_first_of_its_model_and_setting() -> None:
    rows = [
        {"model_name": "M0", "score": 50.0},
        {"model_name": "M1", "score": 50.0},
        {"model_name": "M0", "setting": "cot", "score": 60.0},  # another setting: a row of its own
        {"model_name": "M1", "score": 51.0},
        {"model_name": "M1", "score": 52.0},
    ]
    sent = ReadFields.model_validate({"read_on": "2026-11-01", "entries": rows})
    with pytest.raises(InvalidInput) as refused:
        with_read(benchmark(), sent, STAMP, {})
    repeat = "repeats row 1: one row per model and setting ('M1', setting None)"
    assert refusals(refused) == [
        Problem(("entries", 3), repeat, refers_to=("entries", 1)),
        Problem(("entries", 4), repeat, refers_to=("entries", 1)),
    ]


def test_a_benchmark_without_a_category_is_refused_at_category() -> None:
    fields = BenchmarkFields.model_validate({k: v for k, v in NEW.items() if k != "category"})
    with pytest.raises(InvalidInput) as refused:
        changed_benchmark(None, "tool-bench", fields, CATALOG, STAMP, {})
    assert refusals(refused) == [Problem(("category",), "is required")]
    uncategorised = BenchmarkFields.model_validate({"category": None})
    with pytest.raises(InvalidInput) as refused:
        changed_benchmark(benchmark(), "tool-bench", uncategorised, CATALOG, STAMP, {})
    assert refusals(refused) == [Problem(("category",), "is required")]


def test_today_is_kept_and_the_day_after_is_the_future() -> None:
    """A date as late as the writer's today (the importer's stamp, in UTC) is kept, and a month
    as late as today's; one day or one month later is refused."""
    today = STAMP.at.date()
    assert today == date(2026, 11, 12)
    read = {"read_on": "2026-11-12", "entries": [{"model_name": "M", "score": 1.0}]}
    assert parse(ReadFields, read, today=today).read_on == "2026-11-12"
    published = {"model_name": "M", "score": 1.0, "published_on": "2026-11-12"}
    assert parse(ReadFields, {**read, "entries": [published]}, today=today).entries
    with pytest.raises(InvalidInput) as refused:
        parse(ReadFields, {**read, "read_on": "2026-11-13"}, today=today)
    assert refusals(refused) == [Problem(("read_on",), "2026-11-13 is in the future")]

    assert parse(ModelFields, {"name": "M", "released_on": "2026-11"}, today=today).released_on
    with pytest.raises(InvalidInput) as refused:
        parse(ModelFields, {"name": "M", "released_on": "2026-12"}, today=today)
    assert refusals(refused) == [Problem(("released_on",), "2026-12 is in the future")]


def test_an_interval_of_no_width_at_the_score_is_recorded() -> None:
    """A source may publish an interval that is a point (every run gave the same score)."""
    rows = [{"model_name": "M0", "score": 50.0, "interval": {"low": 50.0, "high": 50.0}}]
    sent = ReadFields.model_validate({"read_on": "2026-11-01", "entries": rows})
    recorded = with_read(benchmark(), sent, STAMP, {})
    assert recorded is not None
    assert recorded["entries"][0]["interval"] == {"low": 50.0, "high": 50.0, "level": 0.95}
    beside = {"model_name": "M0", "score": 50.0, "interval": {"low": 50.5, "high": 50.5}}
    with pytest.raises(InvalidInput) as refused:
        parse(ReadFields, {"read_on": "2026-11-01", "entries": [beside]})
    assert refusals(refused) == [
        Problem(("entries", 0, "interval"), "50.5-50.5 does not hold the score 50")
    ]
