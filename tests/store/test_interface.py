"""The interface once (store.interface): each method declared on one line of one role, with what
it is to a view of the store (store.reads), and both stores implementing every one of them with
the same parameters."""

import inspect
from collections import Counter

import pytest

from store import Store
from store.mongo import MongoStore
from store.reads import CALLS, READS, Call
from store.sqlite import SqliteStore

METHODS = {
    name
    for name, member in inspect.getmembers(Store)
    if not name.startswith("_") and callable(member)
}
ROLES = [role for role in Store.__mro__[1:] if role.__module__ == "store.interface"]


@pytest.mark.parametrize("implementation", [SqliteStore, MongoStore])
def test_each_store_implements_every_method_with_its_parameters(implementation: type) -> None:
    for name in sorted(METHODS):
        declared = inspect.signature(getattr(Store, name)).parameters
        made = inspect.signature(getattr(implementation, name)).parameters
        assert list(made) == list(declared), name
        assert [p.kind for p in made.values()] == [p.kind for p in declared.values()], name


def test_every_method_is_declared_by_exactly_one_role() -> None:
    declared = Counter(
        name for role in ROLES for name, member in vars(role).items() if name in METHODS
    )
    assert set(declared) == METHODS
    assert [name for name, count in declared.items() if count > 1] == []


def test_what_a_view_is_told_of_a_method_names_a_method_and_rules_are_for_reads() -> None:
    assert set(CALLS) <= METHODS
    assert {name for name in READS if CALLS[name] is not Call.READ} == set()
    # Writes are not noted: a change they make retires answers, they are no part of one.
    assert {"replace", "insert", "write_batch", "set_tracked_ranks"} <= {
        name for name, call in CALLS.items() if call is Call.WRITE
    }
