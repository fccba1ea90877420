"""A kept list's slices are made once (two kept), and it keeps the completed values of two
selections."""

from schema.vocabulary import MOST_SELECTIONS, MOST_SLICES, Kept


def test_a_slice_is_the_same_list_each_time_and_the_whole_is_itself() -> None:
    kept = Kept(range(5))
    assert kept.head(2) == [0, 1]
    assert kept.head(2) is kept.head(2)
    assert kept.tail(2) == [3, 4]
    assert kept.tail(2) is kept.tail(2)
    assert kept.head(2) is not kept.tail(2)
    assert kept.head(5) is kept
    assert kept.tail(9) is kept
    assert kept.tail(5) is kept
    assert kept.tail(1) == [4]
    assert kept.head(0) == []
    assert type(kept.head(2)) is Kept


def test_the_oldest_selection_makes_room() -> None:
    kept = Kept([1])
    selections = [(object(),) for _ in range(MOST_SELECTIONS + 1)]
    for number, nodes in enumerate(selections):
        kept.keep_completed(nodes, [number])
    assert MOST_SELECTIONS == 2
    assert kept.completed_under(selections[0]) is None
    assert [kept.completed_under(nodes) for nodes in selections[1:]] == [[1], [2]]
    assert kept.completed_under((object(),)) is None


def test_a_slice_knows_its_whole_and_the_oldest_slice_makes_room() -> None:
    kept = Kept(range(5))
    first, last = kept.head(3), kept.tail(2)
    assert (first.whole, first.start, last.whole, last.start) == (kept, 0, kept, 3)
    assert kept.whole is kept
    assert MOST_SLICES == 2
    assert kept.head(1) == [0]  # a third slice: the oldest, head(3), makes room
    assert kept.tail(2) is last
    assert kept.head(3) is not first
