"""The family: parent and tracks (siblings and orders are the store's: tests/store)."""

from typing import Any

from resolvers.families import family
from store.documents import BenchmarkDoc


def benchmark(slug: str, **fields: Any) -> BenchmarkDoc:
    doc: dict[str, Any] = {
        "slug": slug,
        "name": fields.pop("name", slug.title()),
        "parent": None,
        "track_position": None,
        "status": "IN_USE",
        "prominence": 0,
        "released_on": None,
        "category": {"slug": "tool-use", "name": "Tool use"},
        **fields,
    }
    return doc  # type: ignore[return-value]


PARENT = benchmark("suite")
MATH = benchmark("suite-math", parent="suite", track_position=1)
GENERAL = benchmark("suite-general", parent="suite", track_position=2)
FAMILY = [GENERAL, PARENT, MATH]


def test_a_track_sees_its_parent_and_all_its_parents_tracks() -> None:
    found = family(GENERAL, FAMILY)
    assert found.parent is PARENT
    assert found.tracks == [MATH, GENERAL]


def test_a_parent_sees_its_tracks_and_no_parent() -> None:
    found = family(PARENT, FAMILY)
    assert found.parent is None
    assert found.tracks == [MATH, GENERAL]


def test_a_standalone_benchmark_has_no_family() -> None:
    alone = benchmark("alone")
    for relatives in ([alone], [alone, *FAMILY], []):
        found = family(alone, relatives)
        assert found.parent is None
        assert found.tracks == []


def test_tracks_come_by_position_then_by_name_ignoring_case() -> None:
    unplaced = benchmark("suite-zz", name="zz unplaced", parent="suite")
    lower = benchmark("suite-b", name="beta", parent="suite", track_position=2)
    upper = benchmark("suite-a", name="Alpha", parent="suite", track_position=2)
    found = family(PARENT, [GENERAL, lower, PARENT, unplaced, upper, MATH])
    assert [track["slug"] for track in found.tracks] == [
        "suite-zz",  # no position: first
        "suite-math",
        "suite-a",
        "suite-b",
        "suite-general",
    ]
