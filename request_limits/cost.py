"""A request's cost, computed from its document before it runs: how many objects it can return.

- A scalar or enum field is free.
- An object field costs 1 plus what is selected inside it.
- A list of objects costs its size times (1 plus what is selected in each item). A connection
  field's `first` is the size of its `nodes` and `edges`; other lists have an assumed size
  (`ASSUMED_LIST_SIZES`, else `DEFAULT_LIST_SIZE`), the most they usually hold.
- Each mutation field costs `MUTATION_COST` more, for its write.
- Every operation is charged at least `REFUSED_COST`, and a refused one exactly that.
- Introspection (`__schema`, `__type`, `__typename`) is free: it never touches the database.
- Fragments are counted where they are spread; fragments on different types are all counted.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLArgument,
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
    value_from_ast,
)

from api_errors import ApiError

MUTATION_COST = 10
REFUSED_COST = 1
"""What a refused request is charged, and the least any request is: none is free, so no client
can send an unlimited number of them."""
SLICING_ARGUMENTS = ("first", "last")
SLICED_FIELDS = ("nodes", "edges")


@dataclass(frozen=True)
class ListSizes:
    """What the schema promises of its lists' sizes."""

    bounded: Mapping[tuple[str, str], int]
    """The most items each unsliced list holds, by (type, field): bounded when written."""
    max_slice: int
    """The most a plain list's `first` or `last` may ask for."""
    max_page: int
    """The most a connection's `first` may ask for."""


def query_cost(
    schema: GraphQLSchema,
    document: DocumentNode,
    operation_name: str | None,
    variables: Mapping[str, Any] | None,
    sizes: ListSizes,
) -> int:
    """The cost of the operation the request runs (0 if the document names none such).

    A `first` or `last` outside what its field allows is refused (`ApiError`): the request may
    not run.
    """
    operation = get_operation_ast(document, operation_name)
    if operation is None:
        return 0
    root = schema.get_root_type(operation.operation)
    if root is None:
        return 0
    walk = _CostWalk(schema, document, variables or {}, sizes)
    cost = walk.selection_cost(operation.selection_set, root, slice_size=None)
    if operation.operation is OperationType.MUTATION:
        writes = [s for s in operation.selection_set.selections if isinstance(s, FieldNode)]
        cost += MUTATION_COST * len(writes)
    return cost


class _CostWalk:
    def __init__(
        self,
        schema: GraphQLSchema,
        document: DocumentNode,
        variables: Mapping[str, Any],
        sizes: ListSizes,
    ) -> None:
        self.schema = schema
        self.sizes = sizes
        self.fragments = {
            d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
        }
        self.variables = variables
        self.fragment_costs: dict[tuple[str, str, int | None], int] = {}
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
        if selection_set is None:
            return 0
        total = 0
        spread: set[str] = set()
        for selection in selection_set.selections:
            if isinstance(selection, FieldNode):
                total += self.field_cost(selection, parent, slice_size)
            elif isinstance(selection, InlineFragmentNode):
                inner = self.condition(selection.type_condition, parent)
                total += self.selection_cost(selection.selection_set, inner, slice_size)
            elif isinstance(selection, FragmentSpreadNode) and selection.name.value not in spread:
                # A fragment spread twice in one selection is merged, as execution merges it.
                spread.add(selection.name.value)
                total += self.fragment_cost(selection.name.value, parent, slice_size)
        return total

    def fragment_cost(self, name: str, parent: GraphQLNamedType, slice_size: int | None) -> int:
        """A fragment's cost, computed once per place it can stand: fragments spreading
        fragments must not make the computation exponential, however large the cost."""
        fragment = self.fragments.get(name)
        if fragment is None:
            return 0
        inner = self.condition(fragment.type_condition, parent)
        key = (name, inner.name, slice_size)
        if (known := self.fragment_costs.get(key)) is None:
            known = self.selection_cost(fragment.selection_set, inner, slice_size)
            self.fragment_costs[key] = known
        return known

    def field_cost(self, node: FieldNode, parent: GraphQLNamedType, slice_size: int | None) -> int:
        field = getattr(parent, "fields", {}).get(node.name.value)
        if field is None:  # Introspection fields are not listed, and are free.
            return 0
        item_type = get_named_type(field.type)
        if not isinstance(item_type, GraphQLObjectType | GraphQLInterfaceType):
            return 0
        is_connection = "first" in field.args and item_type.name.endswith("Connection")
        inner_slice = self.sliced(node, field, self.sizes.max_page) if is_connection else None
        item_cost = 1 + self.selection_cost(node.selection_set, item_type, inner_slice)
        if not _is_list(field.type):
            return item_cost
        if slice_size is not None and node.name.value in SLICED_FIELDS:
            return slice_size * item_cost
        if (size := self.sliced(node, field, self.sizes.max_slice)) is None:
            size = self.sizes.bounded[(parent.name, node.name.value)]
        return size * item_cost

    def condition(self, named: NamedTypeNode | None, parent: GraphQLNamedType) -> GraphQLNamedType:
        """The type a fragment's fields are selected on."""
        if named is None:
            return parent
        return self.schema.get_type(named.name.value) or parent

    def sliced(self, node: FieldNode, field: GraphQLField, maximum: int) -> int | None:
        """How many items the field's `first` or `last` asks for (None if it has neither)."""
        name = next((name for name in SLICING_ARGUMENTS if name in field.args), None)
        if name is None:
            return None
        value: Any = default_of(field.args[name])
        for argument in node.arguments or ():
            if argument.name.value != name:
                continue
            literal = argument.value
            if isinstance(literal, VariableNode):
                variable = literal.name.value
                default = self.defaults.get(variable)
                value = self.variables.get(variable, getattr(default, "value", value))
            elif isinstance(literal, IntValueNode):
                value = literal.value
        try:
            size = int(value)
        except (TypeError, ValueError):
            return 0  # Not a number: validation or execution refuses it.
        if not 0 <= size <= maximum:
            raise ApiError(f"`{name}` must be between 0 and {maximum}; got {size}.")
        return size


def default_of(argument: GraphQLArgument) -> Any:
    """An argument's default: a literal, as a schema built from SDL keeps it, or a value."""
    default = argument.default
    if default is None:
        return None
    if default.literal is not None:
        return value_from_ast(default.literal, argument.type)
    return default.value


def _is_list(type_: GraphQLType) -> bool:
    if isinstance(type_, GraphQLNonNull):
        type_ = type_.of_type
    return isinstance(type_, GraphQLList)
