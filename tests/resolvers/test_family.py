"""Rule 9 and the family: parent, tracks, and siblings in their default order."""

from typing import Any

from resolvers.catalog import BenchmarkOrder, sort_benchmarks
from resolvers.family import family, siblings
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
    assert family(alone, [alone]) == family(alone, [])
    assert family(alone, [alone]).tracks == []


def test_siblings_leave_out_the_family_and_put_in_use_first() -> None:
    retired = benchmark("old", status="RETIRED", prominence=9)
    prominent = benchmark("famous", prominence=5)
    plain_b = benchmark("b-bench", name="B bench")
    plain_a = benchmark("a-bench", name="a bench")
    members = [*FAMILY, retired, plain_b, prominent, plain_a]
    assert siblings(GENERAL, members) == [prominent, plain_a, plain_b, retired]
    assert siblings(PARENT, members) == siblings(GENERAL, members)
    assert GENERAL in siblings(benchmark("other"), members)


def test_orders_are_total() -> None:
    a = benchmark("a", name="Same", released_on="2024-01")
    b = benchmark("b", name="Same", released_on="2025-06")
    c = benchmark("c", name="Other")
    assert sort_benchmarks([b, a, c], BenchmarkOrder.NAME) == [c, a, b]
    assert sort_benchmarks([a, c, b], BenchmarkOrder.NEWEST_RELEASE) == [b, a, c]
