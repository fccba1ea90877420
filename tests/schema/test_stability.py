"""The check that keeps the published schema stable for partners."""

import re
from pathlib import Path

from schema.stability import breaking_changes, published_sdl

COMMITTED = Path(__file__).parents[2] / "schema.graphql"


def without_field(sdl: str, type_name: str, field: str) -> str:
    """`sdl` with one field (and its description) taken out of one type."""
    body = re.search(rf"^type {type_name} [^{{]*\{{\n(.*?)^\}}", sdl, re.S | re.M)
    assert body is not None
    described = re.compile(rf'(  """(?:(?!""").)*"""\n)?  {field}(\(.*?\))?: [^\n]*\n', re.S)
    trimmed, removed = described.subn("", body.group(1), count=1)
    assert removed == 1
    return sdl[: body.start(1)] + trimmed + sdl[body.end(1) :]


def deprecated(sdl: str, type_name: str, field: str) -> str:
    body = re.search(rf"^type {type_name} [^{{]*\{{\n(.*?)^\}}", sdl, re.S | re.M)
    assert body is not None
    marked = re.sub(
        rf"^(  {field}(\(.*?\))?: [^\n]*)$",
        r'\1 @deprecated(reason: "Use something else.")',
        body.group(1),
        count=1,
        flags=re.M,
    )
    return sdl[: body.start(1)] + marked + sdl[body.end(1) :]


def test_the_code_breaks_nothing_published() -> None:
    """The suite's guard: the code's schema against the committed one."""
    assert breaking_changes(COMMITTED.read_text(encoding="utf-8"), published_sdl()) == []


def test_a_removed_field_is_caught() -> None:
    published = published_sdl()
    assert breaking_changes(published, without_field(published, "Benchmark", "leaderboard")) == [
        "Field Benchmark.leaderboard was removed."
    ]


def test_a_field_deprecated_first_may_go() -> None:
    published = deprecated(published_sdl(), "Benchmark", "trackedModelCount")
    assert (
        breaking_changes(published, without_field(published, "Benchmark", "trackedModelCount"))
        == []
    )


def test_deprecating_one_field_does_not_excuse_another() -> None:
    published = deprecated(published_sdl(), "Benchmark", "trackedModelCount")
    assert breaking_changes(published, without_field(published, "Benchmark", "ceiling")) == [
        "Field Benchmark.ceiling was removed."
    ]


def test_a_changed_type_is_caught() -> None:
    published = published_sdl()
    changed = published.replace("  trackedModelCount: Int!", "  trackedModelCount: String!", 1)
    assert changed != published
    assert breaking_changes(published, changed) == [
        "Field Benchmark.trackedModelCount changed type from Int! to String!."
    ]
