"""A type's stored fields are read off its document by the type's own declarations: each as it
is, an enum by its name, a nested type by its `from_doc`, and a key its TypedDict marks
`NotRequired` as null when an older document lacks it."""

from typing import Any, NotRequired, Self, TypedDict

import pytest
import strawberry

from schema.vocabulary import Kind, StoredFields


@strawberry.type
class Inner:
    name: str

    @classmethod
    def from_doc(cls, doc: dict[str, Any]) -> Self:
        return cls(name=doc["name"].upper())


@strawberry.type
class Outer:
    slug: str
    kind: Kind | None
    inner: Inner | None
    count: int | None
    hidden: strawberry.Private[str]

    @strawberry.field
    def computed(self) -> int:
        return 1


class OuterDoc(TypedDict):
    slug: str
    kind: str | None
    inner: dict[str, Any] | None
    count: NotRequired[int | None]


FIELDS = StoredFields(Outer, OuterDoc)


def test_each_stored_field_is_read_as_its_type_declares() -> None:
    doc = {"slug": "s", "kind": "CODING", "inner": {"name": "x"}, "count": 3, "other": 0}
    assert FIELDS.of(doc) == {
        "slug": "s",
        "kind": Kind.CODING,
        "inner": Inner(name="X"),
        "count": 3,
    }
    assert FIELDS.all_names == {"slug", "kind", "inner", "count"}  # no resolver, no private


def test_null_stays_null_and_an_older_document_lacks_what_it_may() -> None:
    assert FIELDS.of({"slug": "s", "kind": None, "inner": None}) == {
        "slug": "s",
        "kind": None,
        "inner": None,
        "count": None,
    }


def test_a_missing_key_the_document_must_hold_is_refused() -> None:
    with pytest.raises(KeyError):
        FIELDS.of({"slug": "s", "inner": None})  # `kind` is required
    with pytest.raises(KeyError):
        FIELDS.of({"kind": None, "inner": None})  # so is `slug`
    with pytest.raises(KeyError):
        FIELDS.of({"slug": "s", "kind": "GAME", "inner": None})  # no such kind
