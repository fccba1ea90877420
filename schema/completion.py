"""Completed once: the rows of a leaderboard, as GraphQL completes them, kept with the rows.

A page executed again after a change (a refresh, issue 30) completes its leaderboard's hundred
rows and its scores over time field by field, though neither changed: that is most of what a
recomputation costs. Those lists are kept per version of what they derive from
(schema.vocabulary.Kept, made in schema.types.benchmark.derived), and their items are plain
values read by attribute. So the value GraphQL completes from such a list, under a selection
that reads only such values, is the same every time: it is kept with the list, and the next
execution of the same selection takes it as it is.

A selection qualifies only when its completion cannot depend on anything but the list: every
field it selects (through fragments too) takes no arguments and no directive, is read by
attribute (Strawberry's basic field: no resolver, no extension or permission), and is a scalar,
an enum or an object type whose selection qualifies in turn. The selection is known by its
nodes, from the parsed document the app keeps per text. A slice of a kept list (`first: 10`)
is answered with a slice of the whole list's completed value: the whole is completed once.

graphql-core has no public hook to complete a subtree: its executor, which Strawberry lets a
schema replace (`execution_context_class`), is extended at `complete_list_value`, the step
that receives the list (graphql-core 3.3; pyproject.toml bounds the version, and
tests/schema/test_completion.py fails if the step is no longer taken).
"""

from collections.abc import Iterable, Sequence
from typing import Any, cast

from graphql import (
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLList,
    GraphQLObjectType,
    GraphQLOutputType,
    GraphQLResolveInfo,
    InlineFragmentNode,
    SelectionNode,
    get_named_type,
    is_leaf_type,
    is_non_null_type,
    is_object_type,
)
from graphql.execution.collect_fields import FieldDetailsList
from graphql.pyutils import AwaitableOrValue, Path
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext
from strawberry.schema.schema_converter import GraphQLCoreConverter
from strawberry.types.field import StrawberryField

from schema.vocabulary import Kept

NOT_PLAIN = object()
"""Kept for a selection whose completion may depend on more than the list: never reused."""


class ReusingCompletions(StrawberryGraphQLCoreExecutionContext):
    """Strawberry's executor, taking a kept list's completed value when it has one."""

    def complete_list_value(
        self,
        return_type: GraphQLList[GraphQLOutputType],
        field_details_list: FieldDetailsList,
        info: GraphQLResolveInfo[Any],
        path: Path,
        result: Any,
        position_context: Any,
    ) -> AwaitableOrValue[list[Any]]:
        if type(result) is not Kept or position_context is not None:
            return super().complete_list_value(
                return_type, field_details_list, info, path, result, position_context
            )
        whole, nodes = result.whole, tuple(details.node for details in field_details_list)
        found: Any = whole.completed_under(nodes)
        if found is None:
            if not plain_list(return_type, nodes, self.fragment_definitions):
                whole.keep_completed(nodes, NOT_PLAIN)
            else:  # The whole list, once: a slice of it is a slice of its completed value.
                errors = len(self.collected_errors.errors)
                found = super().complete_list_value(
                    return_type, field_details_list, info, path, whole, position_context
                )
                if len(self.collected_errors.errors) == errors:
                    whole.keep_completed(nodes, found)
        if found is None or found is NOT_PLAIN:
            return super().complete_list_value(
                return_type, field_details_list, info, path, result, position_context
            )
        if result is whole:
            return found  # type: ignore[no-any-return]
        return found[result.start : result.start + len(result)]  # type: ignore[no-any-return]


def plain_list(
    return_type: GraphQLList[GraphQLOutputType],
    nodes: Sequence[FieldNode],
    fragments: dict[str, FragmentDefinitionNode],
) -> bool:
    """Whether completing a list of `return_type` under `nodes` reads only its items' plain
    values (see the module). The document is valid: an object is selected into, a leaf is
    not, and a field read by attribute takes no arguments."""
    item = return_type.of_type
    if is_non_null_type(item):
        item = item.of_type
    return (
        is_object_type(item)
        and not any(node.directives for node in nodes)
        and all(plain_selections(item, selected(node), fragments) for node in nodes)
    )


def plain_selections(
    owner: GraphQLObjectType,
    selections: Iterable[SelectionNode],
    fragments: dict[str, FragmentDefinitionNode],
) -> bool:
    """Whether these selections of an `owner` read only its plain values. A fragment's type
    condition needs no check: on an object type, a valid document's fragments all apply."""
    for selection in selections:
        if selection.directives:
            return False
        if isinstance(selection, FieldNode):
            plain = plain_field(owner, selection, fragments)
        elif isinstance(selection, FragmentSpreadNode):
            fragment = fragments[selection.name.value]
            plain = plain_selections(owner, fragment.selection_set.selections, fragments)
        else:
            inline = cast(InlineFragmentNode, selection)
            plain = plain_selections(owner, inline.selection_set.selections, fragments)
        if not plain:
            return False
    return True


def plain_field(
    owner: GraphQLObjectType, node: FieldNode, fragments: dict[str, FragmentDefinitionNode]
) -> bool:
    name = node.name.value
    if name == "__typename":
        return True
    field = owner.fields[name]
    definition = field.extensions.get(GraphQLCoreConverter.DEFINITION_BACKREF)
    if not isinstance(definition, StrawberryField) or not definition.is_basic_field:
        return False
    named = get_named_type(field.type)
    if is_leaf_type(named):
        return True
    # An interface or a union would be completed by its runtime type: none is read by
    # attribute on a kept list's items today, so none is taken as plain.
    return is_object_type(named) and plain_selections(named, selected(node), fragments)


def selected(node: FieldNode) -> tuple[SelectionNode, ...]:
    """The selections of a field of an object type (a valid document has them)."""
    assert node.selection_set is not None
    return node.selection_set.selections
