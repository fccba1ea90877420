"""What an operation selects below the field being resolved, read before it runs: so that a
resolver reads no more than its answer shows (a page's siblings, a catalog's leaders' models)."""

from collections.abc import Iterator
from typing import Any

import strawberry
from graphql import (
    FieldNode,
    FragmentSpreadNode,
    GraphQLInputType,
    GraphQLInt,
    GraphQLString,
    InlineFragmentNode,
    SelectionSetNode,
    Undefined,
    value_from_ast,
)
from strawberry.types.nodes import SelectedField, Selection

LEADER_FIELDS = frozenset({"leader", "trackedLeader"})
"""A catalog row's fields answered from its stored leaders and their models."""


def rows_select(info: strawberry.Info[Any], names: frozenset[str]) -> bool:
    """Whether the rows of the connection being resolved (its nodes, or its edges' nodes)
    select one of `names` (through fragments too; @skip and @include are not read: a row that
    does not show them is only answered as if it might)."""
    rows: list[SelectedField] = []
    for field in _fields(info.selected_fields[0].selections):
        if field.name == "nodes":
            rows.append(field)
        elif field.name == "edges":
            rows += [node for node in _fields(field.selections) if node.name == "node"]
    return any(field.name in names for row in rows for field in _fields(row.selections))


def siblings_shown(info: strawberry.Info[Any], most: int) -> int:
    """How many of its first siblings the benchmark being resolved shows (the most any of its
    `siblings` selections without `after` asks for), up to `most`: so a page reads, and its
    kept answer depends on, no sibling it does not show. Read off the operation's syntax
    tree: `info.selected_fields` would convert the whole page's selections first (some 5% of a
    small page). Where a named fragment may hide some, `most`."""
    root = _root_field(info.operation.selection_set, info.path.key)
    found = None if root is None else _siblings_fields(root.selection_set)
    if found is None:
        return most
    variables = info.variable_values
    wanted = [
        _argument(field, "first", GraphQLInt, variables, most)
        for field in found
        if _argument(field, "after", GraphQLString, variables, None) is None
    ]
    return max(0, min(max(wanted, default=0), most))


def _root_field(selections: SelectionSetNode | None, key: str | int) -> FieldNode | None:
    """The root field answered under `key` (its alias, or its name), if not in a fragment."""
    for node in selections.selections if selections else ():
        if isinstance(node, FieldNode) and (node.alias or node.name).value == key:
            return node
    return None


def _siblings_fields(selections: SelectionSetNode | None) -> list[FieldNode] | None:
    """The `siblings` fields among these selections (inline fragments' too); None if a named
    fragment's spread may hold more."""
    found = []
    for node in selections.selections if selections else ():
        if isinstance(node, FragmentSpreadNode):
            return None
        if isinstance(node, InlineFragmentNode):
            inner = _siblings_fields(node.selection_set)
            if inner is None:
                return None
            found += inner
        elif isinstance(node, FieldNode) and node.name.value == "siblings":
            found.append(node)
    return found


def _argument(
    field: FieldNode,
    name: str,
    kind: GraphQLInputType,
    variables: dict[str, Any],
    default: Any,
) -> Any:
    """An argument's value (a literal, or a variable's), or `default` if absent or null."""
    node = next((a.value for a in field.arguments or () if a.name.value == name), None)
    value = Undefined if node is None else value_from_ast(node, kind, variables)
    return default if value is None or value is Undefined else value


def _fields(selections: list[Selection]) -> Iterator[SelectedField]:
    for selection in selections:
        if isinstance(selection, SelectedField):
            yield selection
        else:  # a fragment's fields are the type's own
            yield from _fields(selection.selections)
