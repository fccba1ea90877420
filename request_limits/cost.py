"""A request's cost, computed from its document before it runs: how many objects it can return.

The schema says what its fields cost with the cost directive spec's directives, read here from
the published SDL (one source: what partners read is what is charged):
- A scalar or enum field is free.
- An object field weighs 1, or its `@cost(weight:)` (a mutation's write weighs 10), plus what is
  selected inside it.
- A list of objects costs its size times (its weight plus what is selected in each item). Its
  `@listSize` gives the size: the value of one of its `slicingArguments` (its default if not
  sent), or its `assumedSize` (the most it holds). A connection's slice sizes the lists its
  `sizedFields` name (`nodes`, `edges`).
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
    SelectionSetNode,
    VariableNode,
    get_directive_values,
    get_named_type,
    value_from_ast,
)

from api_errors import ApiError
from request_limits.document import selected_operation

REFUSED_COST = 1
"""What a refused request is charged, and the least any request is: none is free, so no client
can send an unlimited number of them."""
OBJECT_WEIGHT = 1


@dataclass(frozen=True)
class ListSizes:
    """The most a slicing argument may ask for (what is refused before anything runs)."""

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
    """The cost of the operation the request runs (`selected_operation`: refused, as
    `ApiError`, if the document does not say which).

    A `first` or `last` outside what its field allows is refused (`ApiError`): the request may
    not run.
    """
    operation = selected_operation(document, operation_name)
    root = schema.get_root_type(operation.operation)
    if root is None:
        return 0
    walk = _CostWalk(schema, document, variables or {}, sizes)
    return walk.selection_cost(operation.selection_set, root, Slice())


@dataclass(frozen=True)
class Slice:
    """The size a connection's slicing argument gives the lists it names (`sizedFields`)."""

    size: int | None = None
    fields: tuple[str, ...] = ()


def list_size(schema: GraphQLSchema, field: GraphQLField) -> dict[str, Any] | None:
    """The arguments of the field's `@listSize`, if it has one."""
    return _directive(schema, field, "listSize")


def weight(schema: GraphQLSchema, field: GraphQLField) -> int:
    """What resolving the object field costs: its `@cost(weight:)`, else `OBJECT_WEIGHT`."""
    cost = _directive(schema, field, "cost")
    return int(cost["weight"]) if cost is not None else OBJECT_WEIGHT


def _directive(schema: GraphQLSchema, field: GraphQLField, name: str) -> dict[str, Any] | None:
    directive = schema.get_directive(name)
    if directive is None or field.ast_node is None:
        return None
    return get_directive_values(directive, field.ast_node)


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
        self.fragment_costs: dict[tuple[str, str, Slice], int] = {}
        self.defaults = {
            definition.variable.name.value: definition.default_value
            for operation in document.definitions
            for definition in getattr(operation, "variable_definitions", None) or ()
        }

    def selection_cost(
        self,
        selection_set: SelectionSetNode | None,
        parent: GraphQLNamedType,
        slice_size: Slice,
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

    def fragment_cost(self, name: str, parent: GraphQLNamedType, slice_size: Slice) -> int:
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

    def field_cost(self, node: FieldNode, parent: GraphQLNamedType, slice_size: Slice) -> int:
        field = getattr(parent, "fields", {}).get(node.name.value)
        if field is None:  # Introspection fields are not listed, and are free.
            return 0
        item_type = get_named_type(field.type)
        if not isinstance(item_type, GraphQLObjectType | GraphQLInterfaceType):
            return 0
        sizes = list_size(self.schema, field) or {}
        inner = Slice()
        if sizes.get("sizedFields"):
            inner = Slice(
                self.sliced(node, field, sizes, self.sizes.max_page), tuple(sizes["sizedFields"])
            )
        item_cost = weight(self.schema, field) + self.selection_cost(
            node.selection_set, item_type, inner
        )
        if not _is_list(field.type):
            return item_cost
        if slice_size.size is not None and node.name.value in slice_size.fields:
            return slice_size.size * item_cost
        if sizes.get("slicingArguments"):
            return self.sliced(node, field, sizes, self.sizes.max_slice) * item_cost
        if sizes.get("assumedSize") is None:
            raise ValueError(f"{parent.name}.{node.name.value} is a list without @listSize")
        return int(sizes["assumedSize"]) * item_cost

    def condition(self, named: NamedTypeNode | None, parent: GraphQLNamedType) -> GraphQLNamedType:
        """The type a fragment's fields are selected on."""
        if named is None:
            return parent
        return self.schema.get_type(named.name.value) or parent

    def sliced(
        self, node: FieldNode, field: GraphQLField, sizes: dict[str, Any], maximum: int
    ) -> int:
        """How many items the field's slicing argument (`first`, `last`) asks for."""
        name = next(name for name in sizes["slicingArguments"] if name in field.args)
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
