"""A request's cost, computed from its document before it runs: how many objects it can return.

- A scalar or enum field is free.
- An object field costs 1 plus what is selected inside it.
- A list of objects costs its size times (1 plus what is selected in each item). A connection
  field's `first` is the size of its `nodes` and `edges`; other lists have an assumed size
  (`ASSUMED_LIST_SIZES`, else `DEFAULT_LIST_SIZE`), the most they usually hold.
- Each mutation field costs `MUTATION_COST` more, for its write.
- Introspection (`__schema`, `__type`, `__typename`) is free: it never touches the database.
- Fragments are counted where they are spread; fragments on different types are all counted.
"""

from collections.abc import Iterator, Mapping
from typing import Any

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLField,
    GraphQLInterfaceType,
    GraphQLList,
    GraphQLNamedType,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLSchema,
    GraphQLType,
    InlineFragmentNode,
    IntValueNode,
    NamedTypeNode,
    OperationType,
    SelectionSetNode,
    VariableNode,
    get_named_type,
    get_operation_ast,
)

MUTATION_COST = 10
DEFAULT_LIST_SIZE = 20
ASSUMED_LIST_SIZES: dict[tuple[str, str], int] = {
    ("Query", "categories"): 50,
    ("Benchmark", "leaderboard"): 50,
    ("Benchmark", "scoresOverTime"): 100,
    ("Benchmark", "tracks"): 10,
    ("Model", "results"): 50,
    ("LeaderboardRead", "added"): 50,
    ("LeaderboardRead", "removed"): 50,
    ("LeaderboardRead", "changed"): 50,
}
SLICING_ARGUMENT = "first"
SLICED_FIELDS = ("nodes", "edges")

Fragments = Mapping[str, FragmentDefinitionNode]


def query_cost(
    schema: GraphQLSchema,
    document: DocumentNode,
    operation_name: str | None,
    variables: Mapping[str, Any] | None,
) -> int:
    """The cost of the operation the request runs (0 if the document names none such)."""
    operation = get_operation_ast(document, operation_name)
    if operation is None:
        return 0
    root = schema.get_root_type(operation.operation)
    if root is None:
        return 0
    walk = _CostWalk(schema, document, variables or {})
    cost = walk.selection_cost(operation.selection_set, root, slice_size=None)
    if operation.operation is OperationType.MUTATION:
        cost += MUTATION_COST * sum(1 for _ in walk.fields(operation.selection_set, root))
    return cost


class _CostWalk:
    def __init__(
        self, schema: GraphQLSchema, document: DocumentNode, variables: Mapping[str, Any]
    ) -> None:
        self.schema = schema
        self.fragments = {
            d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
        }
        self.variables = variables
        self.defaults = {
            definition.variable.name.value: definition.default_value
            for operation in document.definitions
            for definition in getattr(operation, "variable_definitions", None) or ()
        }

    def selection_cost(
        self,
        selection_set: SelectionSetNode | None,
        parent: GraphQLNamedType,
        slice_size: int | None,
    ) -> int:
        total = 0
        for node, field, owner in self.fields(selection_set, parent):
            item_type = get_named_type(field.type)
            if not isinstance(item_type, GraphQLObjectType | GraphQLInterfaceType):
                continue
            is_connection = SLICING_ARGUMENT in field.args and item_type.name.endswith("Connection")
            inner_slice = self.first(node, field) if is_connection else None
            item_cost = 1 + self.selection_cost(node.selection_set, item_type, inner_slice)
            if not _is_list(field.type):
                total += item_cost
            elif slice_size is not None and node.name.value in SLICED_FIELDS:
                total += slice_size * item_cost
            else:
                size = ASSUMED_LIST_SIZES.get((owner.name, node.name.value), DEFAULT_LIST_SIZE)
                total += size * item_cost
        return total

    def fields(
        self, selection_set: SelectionSetNode | None, parent: GraphQLNamedType
    ) -> Iterator[tuple[FieldNode, GraphQLField, GraphQLNamedType]]:
        """The fields selected on `parent`, through fragments: each with its definition and
        the type that defines it."""
        if selection_set is None:
            return
        for selection in selection_set.selections:
            if isinstance(selection, FieldNode):
                fields = getattr(parent, "fields", {})
                if selection.name.value in fields:  # Introspection fields are not listed.
                    yield selection, fields[selection.name.value], parent
            elif isinstance(selection, InlineFragmentNode):
                inner = self.condition(selection.type_condition, parent)
                yield from self.fields(selection.selection_set, inner)
            elif isinstance(selection, FragmentSpreadNode) and (
                fragment := self.fragments.get(selection.name.value)
            ):
                inner = self.condition(fragment.type_condition, parent)
                yield from self.fields(fragment.selection_set, inner)

    def condition(self, named: NamedTypeNode | None, parent: GraphQLNamedType) -> GraphQLNamedType:
        """The type a fragment's fields are selected on."""
        if named is None:
            return parent
        return self.schema.get_type(named.name.value) or parent

    def first(self, node: FieldNode, field: GraphQLField) -> int:
        """The connection's page size as this request asks for it."""
        value: Any = field.args[SLICING_ARGUMENT].default_value
        for argument in node.arguments or ():
            if argument.name.value != SLICING_ARGUMENT:
                continue
            literal = argument.value
            if isinstance(literal, VariableNode):
                name = literal.name.value
                default = self.defaults.get(name)
                value = self.variables.get(name, getattr(default, "value", value))
            elif isinstance(literal, IntValueNode):
                value = literal.value
        try:
            return max(0, int(value))
        except (TypeError, ValueError):
            return 0  # Not a number: validation or execution refuses it, at no cost.


def _is_list(type_: GraphQLType) -> bool:
    if isinstance(type_, GraphQLNonNull):
        type_ = type_.of_type
    return isinstance(type_, GraphQLList)
