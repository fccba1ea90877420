"""An object type's fields read off its stored document by the type's own declarations, so that
no type writes its fields out a second time to build itself.

Each field the type stores (one without a resolver, other than a Node's `id`; private fields
are not in the schema) is
the document's value under the field's name, made into the field's type: an enum by its name, a
nested type by its `from_doc`, anything else as it is. A key the document's TypedDict marks
`NotRequired` (absent in older documents) reads as null.
"""

from collections.abc import Callable, Iterable, Mapping
from enum import Enum
from operator import itemgetter
from typing import Any

from strawberry.types.base import StrawberryOptional, get_object_definition
from strawberry.types.enum import StrawberryEnumDefinition

Convert = Callable[[Any], Any]


def _convert(field_type: object) -> Convert | None:
    """How a stored value becomes a value of `field_type` (None: as it is)."""
    if isinstance(field_type, StrawberryOptional):
        field_type = field_type.of_type
    if isinstance(field_type, StrawberryEnumDefinition):
        # As enum[name], without the metaclass's call: a catalog page builds a hundred
        # benchmarks, each with six enums.
        members: Iterable[Enum] = field_type.wrapped_cls
        return {member.name: member for member in members}.__getitem__
    from_doc: Convert | None = getattr(field_type, "from_doc", None)
    return from_doc


def _one(names: list[str]) -> Callable[[Mapping[str, Any]], tuple[Any, ...]]:
    """As `itemgetter(*names)` for one name or none: a tuple, as it gives for several."""
    return lambda doc: tuple(doc[name] for name in names)


class StoredFields:
    """What `type_` shows of a document (of the TypedDict `document`, if its keys may be
    absent), read off it."""

    def __init__(self, type_: type, document: type | None = None) -> None:
        optional: frozenset[str] = getattr(document, "__optional_keys__", frozenset())
        self.names: list[str] = []  # copied as they are, present in every document
        self.absent_in_older: list[str] = []  # copied as they are, null if absent
        self.converted: list[tuple[str, Convert, bool]] = []  # with whether it may be absent
        for field in get_object_definition(type_, strict=True).fields:
            # A global `id` is made from the slug (schema.vocabulary.node), never stored.
            if field.base_resolver is not None or field.python_name == "id":
                continue
            name = field.python_name
            convert = _convert(field.type)
            if convert is not None:
                self.converted.append((name, convert, name in optional))
            elif name in optional:
                self.absent_in_older.append(name)
            else:
                self.names.append(name)
        # Read in one call: a catalog page reads some twenty fields of a hundred benchmarks.
        self._present = itemgetter(*self.names) if len(self.names) > 1 else _one(self.names)

    def of(self, doc: Mapping[str, Any]) -> dict[str, Any]:
        """The type's stored fields, by name, as its constructor takes them."""
        found = dict(zip(self.names, self._present(doc), strict=True))
        for name in self.absent_in_older:
            found[name] = doc.get(name)
        for name, convert, may_be_absent in self.converted:
            value = doc.get(name) if may_be_absent else doc[name]
            found[name] = None if value is None else convert(value)
        return found

    @property
    def all_names(self) -> set[str]:
        return {*self.names, *self.absent_in_older, *(name for name, _, _ in self.converted)}
