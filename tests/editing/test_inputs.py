"""A benchmark's fields, and a model's, are declared once: on the write side (editing.inputs),
with the rules a value must meet. Everything else that names them follows that declaration and
is checked against it here, by one test: the stored document's type (and a catalog row's
summary), the GraphQL input, and the GraphQL type, which reads its fields off the document by
its own declarations (schema.vocabulary.StoredFields) rather than naming them again. Each check
refuses what it must, at its edges, in the words a client reads."""

import dataclasses
import math
from datetime import date
from typing import Any, get_type_hints

import pytest
from pydantic import BaseModel
from strawberry.types.base import get_object_definition

from editing import inputs as fields
from editing.errors import InvalidInput, dotted
from schema.types import Benchmark, Interval, LeaderboardRow, Metric, Model, ModelCardReport, Source
from schema.vocabulary import StoredFields
from schema.vocabulary import inputs as graphql
from store import documents as stored


@dataclasses.dataclass(frozen=True)
class Mirror:
    """What follows one declaration: its stored document (and summary, if a catalog row is
    one), its GraphQL input, and the GraphQL type that shows it (None: shown otherwise, as a
    read's rows are)."""

    declared: type[BaseModel]
    document: Any
    graphql_input: Any
    shown_by: type | None
    summary: Any = None


MIRRORS = [
    Mirror(
        fields.BenchmarkFields,
        stored.BenchmarkDoc,
        graphql.BenchmarkInput,
        Benchmark,
        summary=stored.BenchmarkSummaryDoc,
    ),
    Mirror(fields.ModelFields, stored.ModelDoc, graphql.ModelInput, Model),
    Mirror(fields.ReadFields, stored.ReadDoc, graphql.LeaderboardReadInput, None),
    Mirror(fields.EntryFields, stored.EntryDoc, graphql.EntryInput, LeaderboardRow),
    Mirror(fields.MetricFields, stored.MetricDoc, graphql.MetricInput, Metric),
    Mirror(fields.SourceFields, stored.SourceDoc, graphql.SourceInput, Source),
    Mirror(fields.IntervalFields, stored.IntervalDoc, graphql.IntervalInput, Interval),
    Mirror(
        fields.ModelCardReportFields,
        stored.ModelCardReportDoc,
        graphql.ModelCardReportInput,
        ModelCardReport,
    ),
]
# Kept from an exported history on import; a read sent to the API is stamped with its writer.
IMPORT_ONLY = {"recorded_by", "recorded_at"}
# Said by a request, not kept.
REQUEST_ONLY = {"allow_removals"}
# Only a whole document carries them, not a catalog row's summary.
WHOLE_ONLY = {"model_card_reports"}
# Built from the document by code of their own, not read off it field by field.
BUILT_OTHERWISE = {LeaderboardRow, Interval}


@pytest.mark.parametrize("mirror", MIRRORS, ids=lambda mirror: mirror.declared.__name__)
def test_every_use_of_a_declaration_follows_it(mirror: Mirror) -> None:
    declared = set(mirror.declared.model_fields)
    kept = declared - REQUEST_ONLY
    document = set(get_type_hints(mirror.document))
    assert kept <= document
    if mirror.summary is not None:
        assert kept - WHOLE_ONLY <= set(get_type_hints(mirror.summary))
    taken = {field.name for field in dataclasses.fields(mirror.graphql_input)}
    assert taken == declared - IMPORT_ONLY
    if mirror.shown_by is not None:
        shown = {f.python_name for f in get_object_definition(mirror.shown_by, strict=True).fields}
        assert kept - IMPORT_ONLY <= shown
        if mirror.shown_by not in BUILT_OTHERWISE:
            assert StoredFields(mirror.shown_by).all_names <= document


# The checks, each at its edges: what is refused, in which words, and what is kept.
PAST = date(2020, 1, 15)  # "today" for the checks below: any clock since is later


def problem(model: type[BaseModel], data: dict[str, Any]) -> tuple[str, str]:
    """The one problem `parse` finds: where, and its message."""
    with pytest.raises(InvalidInput) as refused:
        fields.parse(model, data, today=PAST)
    [found] = refused.value.problems
    return dotted(found.location), found.message


def report(**given: Any) -> dict[str, Any]:
    return {"model_name": "Qwen", "score": 1.0, **given}


def test_a_date_is_a_real_past_day_since_1900() -> None:
    day = fields.parse(fields.ModelCardReportFields, report(reported_on="2020-01-15"), today=PAST)
    assert day.reported_on == "2020-01-15"  # today is not the future
    assert problem(fields.ModelCardReportFields, report(reported_on="2020-01-16")) == (
        "reported_on",
        "2020-01-16 is in the future",  # tomorrow, as the given today sees it
    )
    assert problem(fields.ModelCardReportFields, report(reported_on="2020-02-30")) == (
        "reported_on",
        "expected a real date as YYYY-MM-DD, got '2020-02-30'",
    )
    assert problem(fields.ModelCardReportFields, report(reported_on="1899-12-31")) == (
        "reported_on",
        "1899-12-31 is before 1900, the earliest the almanac keeps",
    )
    first = fields.parse(fields.ModelCardReportFields, report(reported_on="1900-01-01"))
    assert first.reported_on == "1900-01-01"


def test_a_month_is_a_past_month_since_1900() -> None:
    month = fields.parse(fields.BenchmarkFields, {"released_on": "2020-01"}, today=PAST)
    assert month.released_on == "2020-01"  # this month is not the future
    assert problem(fields.BenchmarkFields, {"released_on": "2020-02"}) == (
        "released_on",
        "2020-02 is in the future",
    )
    assert problem(fields.BenchmarkFields, {"test_set_published_on": "2020-1"}) == (
        "test_set_published_on",
        "expected a month as YYYY-MM, got '2020-1'",
    )
    assert problem(fields.BenchmarkFields, {"released_on": "1899-12"}) == (
        "released_on",
        "1899-12 is before 1900, the earliest the almanac keeps",
    )


def test_today_is_the_clocks_unless_given() -> None:
    later = fields.parse(fields.BenchmarkFields, {"released_on": "2020-02"})
    assert later.released_on == "2020-02"


def test_a_vocabulary_word_and_a_web_address() -> None:
    assert problem(fields.BenchmarkFields, {"kind": "GAME"}) == (
        "kind",
        "expected one of KNOWLEDGE, REASONING, MATH, CODING, FUNCTION_CALLING, AGENTIC, "
        "MULTIMODAL, LONG_CONTEXT, SAFETY, got 'GAME'",
    )
    assert fields.parse(fields.BenchmarkFields, {"kind": "SAFETY"}).kind == "SAFETY"
    assert problem(fields.SourceFields, {"name": "S", "url": "ftp://example.org"}) == (
        "url",
        "expected an http(s):// address, got 'ftp://example.org'",
    )
    for url in ("http://example.org/a", "https://example.org"):
        assert fields.parse(fields.SourceFields, {"name": "S", "url": url}).url == url


def test_a_description_may_break_lines_a_name_may_not() -> None:
    described = fields.parse(fields.BenchmarkFields, {"description": "One.\nTwo."})
    assert described.description == "One.\nTwo."
    assert problem(fields.BenchmarkFields, {"description": "One.\tTwo."}) == (
        "description",
        "holds the control character U+0009 at position 5: only printable text is kept",
    )
    assert problem(fields.BenchmarkFields, {"name": "One.\nTwo."}) == (
        "name",
        "holds the control character U+000A at position 5: only printable text is kept",
    )
    assert problem(fields.BenchmarkFields, {"note": "\ufffe"}) == (
        "note",
        "holds the noncharacter U+FFFE at position 1: only printable text is kept",
    )


@pytest.mark.parametrize(
    ("text", "allowed", "said"),
    [
        ("plain text, é and 字", "", None),
        ("a\x1bb\ufffe", "", "the control character U+001B at position 2"),
        ("a\ufdd0b\x1b", "", "the noncharacter U+FDD0 at position 2"),
        ("a\nb\tc", "\n", "the control character U+0009 at position 4"),
        ("a\nb", "\n", None),
        ("\U0010ffff", "", "the noncharacter U+10FFFF at position 1"),
        ("\x7f", "", "the control character U+007F at position 1"),
    ],
)
def test_control_character_names_the_first_one_refused(
    text: str, allowed: str, said: str | None
) -> None:
    expected = None if said is None else f"holds {said}: only printable text is kept"
    assert fields.control_character(text, allowed) == expected


def test_a_slug_is_at_most_100_characters_of_words() -> None:
    assert fields.slug_problem("a" * 100) is None
    assert fields.slug_problem("a" * 101) == "a slug has at most 100 characters, not 101"
    assert fields.slug_problem("qwen-14b") is None
    assert fields.slug_problem("Qwen") == (
        "'Qwen' is not a slug: a slug holds lowercase letters a-z and digits, in words joined "
        "by single hyphens (e.g. 'qwen-14b')"
    )
    assert fields.check_slug("qwen-14b") == "qwen-14b"
    with pytest.raises(InvalidInput) as refused:
        fields.check_slug("-qwen", ("input", "lab"))
    assert [dotted(p.location) for p in refused.value.problems] == ["input.lab"]
    assert problem(fields.LabFields, {"slug": "a--b", "name": "A"})[0] == "slug"


def test_an_interval_is_ordered_and_holds_the_score() -> None:
    held = fields.parse(fields.EntryFields, report(score=2.0, interval={"low": 2.0, "high": 2.0}))
    assert held.interval == fields.IntervalFields(low=2.0, high=2.0, level=0.95)
    assert problem(fields.IntervalFields, {"low": 2.0, "high": 1.5}) == (
        "",
        "low (2) is above high (1.5)",
    )
    assert problem(fields.EntryFields, report(score=3.0, interval={"low": 1.0, "high": 2.5})) == (
        "interval",
        "1-2.5 does not hold the score 3",
    )
    below = report(score=0.5, interval={"low": 1.0, "high": 2.5})
    assert problem(fields.EntryFields, below)[1] == "1-2.5 does not hold the score 0.5"
    # A refused score is named alone: the interval is not checked against it.
    unscored = report(score="x", interval={"low": 1.0, "high": 2.0})
    assert problem(fields.EntryFields, unscored)[0] == "score"


def test_a_score_of_minus_zero_is_zero() -> None:
    score = fields.parse(fields.EntryFields, report(score=-0.0)).score
    assert (score, math.copysign(1.0, score)) == (0, 1.0)


def test_a_kept_entry_leaves_out_only_the_rare_fields_unset() -> None:
    entry = fields.parse(fields.EntryFields, report(sample_size=10))
    kept = fields.kept_entry(entry)
    assert kept["sample_size"] == 10
    assert not {"interval", "standard_error", "reported_by"} & set(kept)
    assert (kept["setting"], kept["note"]) == (None, None)  # the usual fields, even unset


def test_every_problem_is_named_without_pydantics_prefix() -> None:
    with pytest.raises(InvalidInput) as refused:
        fields.parse(fields.LabFields, {"slug": "A", "name": "\x00"})
    messages = [p.message for p in refused.value.problems]
    assert len(messages) == 2
    assert not any(m.lower().startswith("value error") for m in messages)
    assert [dotted(p.location) for p in refused.value.problems] == ["slug", "name"]
