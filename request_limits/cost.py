"""A request's cost, computed from its document before it runs: how many objects it can return.

The schema says what its fields cost with the cost directive spec's directives, read here from
the published SDL (one source: what partners read is what is charged). Only the operation the
request runs is priced, with its own variables, coerced as execution coerces them (with their
defaults); arguments are coerced as execution coerces them too.
- A scalar or enum field is free, unless it carries a `@cost`.
- An object field weighs 1, or its `@cost(weight:)` (a mutation's write weighs 10), plus what is
  selected inside it.
- An argument with a `@cost` adds its weight when it is given (not null): one that makes the
  field compute instead of read what is stored (`asOf`).
- A list of objects costs its size times (its weight plus what is selected in each item). Its
  `@listSize` gives the size: the largest of its `slicingArguments` given (each within its
  range, or the request is refused), their default if none is given; or its `assumedSize` (the
  most it holds). With `requireOneSlicingArgument` (the spec's default when it is left out)
  exactly one must be given, or the request is refused; every list here sets it false. A
  connection's slice sizes the lists its `sizedFields` name (`nodes`, `edges`).
- Introspection (`__schema`, `__type`) costs an object for each object it returns, counted on
  the schema itself (which is fixed): a full introspection costs what it returns.
- Every operation is charged at least `REFUSED_COST`, and a refused one exactly that.
- Fragments are counted where they are spread; fragments on different types are all counted.
"""

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLArgument,
    GraphQLEnumType,
    GraphQLError,
    GraphQLField,
    GraphQLInputObjectType,
    GraphQLInterfaceType,
    GraphQLList,
    GraphQLNamedType,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLSchema,
    GraphQLType,
    GraphQLUnionType,
    GraphQLWrappingType,
    InlineFragmentNode,
    NamedTypeNode,
    SelectionSetNode,
    TypeMetaFieldDef,
    VariableNode,
    VariableValues,
    get_argument_values,
    get_directive_values,
    get_named_type,
    get_variable_values,
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
    """The most a connection's `first` or `last` may ask for."""


def query_cost(
    schema: GraphQLSchema,
    document: DocumentNode,
    operation_name: str | None,
    variables: Mapping[str, Any] | None,
    sizes: ListSizes,
) -> int:
    """The cost of the operation the request runs (`selected_operation`: refused, as
    `ApiError`, if the document does not say which).

    A slicing argument outside what its field allows is refused (`ApiError`): the request may
    not run. Variables execution would refuse cost nothing here: nothing of the operation runs.
    """
    operation = selected_operation(document, operation_name)
    root = schema.get_root_type(operation.operation)
    if root is None:
        return 0
    coerced = get_variable_values(
        schema, operation.variable_definitions or (), dict(variables or {})
    )
    if not isinstance(coerced, VariableValues):
        return 0
    walk = _CostWalk(schema, document, coerced, sizes)
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
    return _cost(schema, field, OBJECT_WEIGHT)


def _cost(schema: GraphQLSchema, element: GraphQLField | GraphQLArgument, otherwise: int) -> int:
    cost = _directive(schema, element, "cost")
    return int(cost["weight"]) if cost is not None else otherwise


def _directive(
    schema: GraphQLSchema, element: GraphQLField | GraphQLArgument, name: str
) -> dict[str, Any] | None:
    directive = schema.get_directive(name)
    if directive is None or element.ast_node is None:
        return None
    return get_directive_values(directive, element.ast_node)


Introspected = tuple[Any, ...]
"""What an introspection field returns, on the fixed schema: schema, types, fields, arguments."""


def _fields_of(type_: Any) -> Iterable[Any]:
    is_composite = isinstance(type_, GraphQLObjectType | GraphQLInterfaceType)
    return type_.fields.values() if is_composite else ()


INTROSPECTED: dict[str, Callable[[GraphQLSchema, Any], Iterable[Any]]] = {
    # __Schema
    "types": lambda schema, _: schema.type_map.values(),
    "directives": lambda schema, _: schema.directives,
    "queryType": lambda schema, _: (schema.query_type,),
    "mutationType": lambda schema, _: (schema.mutation_type,),
    "subscriptionType": lambda schema, _: (schema.subscription_type,),
    # __Type
    "fields": lambda _, type_: _fields_of(type_),
    "interfaces": lambda _, type_: getattr(type_, "interfaces", ()),
    "possibleTypes": lambda schema, type_: (
        schema.get_possible_types(type_)
        if isinstance(type_, GraphQLInterfaceType | GraphQLUnionType)
        else ()
    ),
    "enumValues": lambda _, type_: (
        type_.values.values() if isinstance(type_, GraphQLEnumType) else ()
    ),
    "inputFields": lambda _, type_: (
        type_.fields.values() if isinstance(type_, GraphQLInputObjectType) else ()
    ),
    "ofType": lambda _, type_: (type_.of_type,) if isinstance(type_, GraphQLWrappingType) else (),
    # __Field, __Directive, __InputValue
    "args": lambda _, field: field.args.values(),
    "type": lambda _, field: (field.type,),
}
"""The introspection fields that return objects, and the objects each returns (those that
exist: a missing root type is null), deprecated ones included (an upper bound)."""


class _CostWalk:
    def __init__(
        self,
        schema: GraphQLSchema,
        document: DocumentNode,
        variables: VariableValues,
        sizes: ListSizes,
    ) -> None:
        self.schema = schema
        self.sizes = sizes
        self.fragments = {
            d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
        }
        self.variables = variables
        self.fragment_costs: dict[tuple[str, str, Slice], int] = {}
        self.introspected: dict[tuple[str, ...], Introspected] = {}
        self.introspection_costs: dict[tuple[str, tuple[str, ...]], int] = {}

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
        if parent is self.schema.query_type and node.name.value in ("__schema", "__type"):
            return self.introspection_cost(node)
        field = getattr(parent, "fields", {}).get(node.name.value)
        if field is None:  # `__typename` is a scalar; any other, validation refuses.
            return 0
        try:
            arguments = get_argument_values(field, node, self.variables)
        except GraphQLError:
            return 0  # Execution refuses the field: it returns nothing.
        # An argument's weight is paid once where the field stands, however many items it has.
        given = self.given(node, arguments)
        computed = sum(_cost(self.schema, field.args[name], 0) for name in given)
        return computed + self.items_cost(node, field, parent, slice_size, arguments, given)

    def items_cost(
        self,
        node: FieldNode,
        field: GraphQLField,
        parent: GraphQLNamedType,
        slice_size: Slice,
        arguments: dict[str, Any],
        given: list[str],
    ) -> int:
        item_type = get_named_type(field.type)
        if not isinstance(item_type, GraphQLObjectType | GraphQLInterfaceType):
            return _cost(self.schema, field, 0)
        sizes = list_size(self.schema, field) or {}
        inner = Slice()
        if sizes.get("sizedFields"):
            size = self.sliced(node, field, sizes, arguments, given, self.sizes.max_page)
            inner = Slice(size, tuple(sizes["sizedFields"]))
        item_cost = weight(self.schema, field) + self.selection_cost(
            node.selection_set, item_type, inner
        )
        if not _is_list(field.type):
            return item_cost
        if slice_size.size is not None and node.name.value in slice_size.fields:
            return slice_size.size * item_cost
        if sizes.get("slicingArguments"):
            size = self.sliced(node, field, sizes, arguments, given, self.sizes.max_slice)
            return size * item_cost
        if sizes.get("assumedSize") is None:
            raise ValueError(f"{parent.name}.{node.name.value} is a list without @listSize")
        return int(sizes["assumedSize"]) * item_cost

    def given(self, node: FieldNode, arguments: dict[str, Any]) -> list[str]:
        """The arguments the field is given a value (not null) for: written in the document,
        not a variable left without a value."""
        return [
            argument.name.value
            for argument in node.arguments or ()
            if arguments.get(argument.name.value) is not None
            and not (
                isinstance(argument.value, VariableNode)
                and argument.value.name.value not in self.variables.coerced
            )
        ]

    def condition(self, named: NamedTypeNode | None, parent: GraphQLNamedType) -> GraphQLNamedType:
        """The type a fragment's fields are selected on."""
        if named is None:
            return parent
        return self.schema.get_type(named.name.value) or parent

    def sliced(
        self,
        node: FieldNode,
        field: GraphQLField,
        sizes: dict[str, Any],
        arguments: dict[str, Any],
        given: list[str],
        maximum: int,
    ) -> int:
        """How many items the field's slicing arguments (`first`, `last`) ask for: the largest
        given, else the largest default."""
        names = [name for name in sizes["slicingArguments"] if name in field.args]
        sent = [name for name in names if name in given]
        if sizes.get("requireOneSlicingArgument") is not False and len(sent) != 1:
            raise ApiError(f"`{node.name.value}` takes exactly one of {', '.join(names)}.")
        for name in sent:
            if not 0 <= arguments[name] <= maximum:
                raise ApiError(f"`{name}` must be between 0 and {maximum}; got {arguments[name]}.")
        values = [arguments[name] for name in sent or names if arguments.get(name) is not None]
        return max(values, default=0)

    def introspection_cost(self, node: FieldNode) -> int:
        """`__schema` or `__type(name:)`: an object for each object it returns."""
        if node.name.value == "__schema":
            path: tuple[str, ...] = (node.name.value,)
            self.introspected[path] = (self.schema,)
        else:
            try:
                name = get_argument_values(TypeMetaFieldDef, node, self.variables)["name"]
            except GraphQLError:
                return 0  # Execution refuses the field: it returns nothing.
            path = (node.name.value, name)
            found = self.schema.get_type(name)
            self.introspected[path] = () if found is None else (found,)
        return OBJECT_WEIGHT * len(self.introspected[path]) + self.introspection_selection(
            node.selection_set, path
        )

    def introspection_selection(
        self, selection_set: SelectionSetNode | None, path: tuple[str, ...]
    ) -> int:
        """What an introspection selection returns below the objects at `path`: each object
        field counted on the schema once per path, however many aliases or fragments ask."""
        if selection_set is None:
            return 0
        total = 0
        for selection in selection_set.selections:
            if isinstance(selection, FieldNode):
                if (children := INTROSPECTED.get(selection.name.value)) is None:
                    continue  # a scalar: free
                inner = (*path, selection.name.value)
                if inner not in self.introspected:
                    self.introspected[inner] = tuple(
                        child
                        for parent in self.introspected[path]
                        for child in children(self.schema, parent)
                        if child is not None
                    )
                total += OBJECT_WEIGHT * len(self.introspected[inner])
                total += self.introspection_selection(selection.selection_set, inner)
            elif isinstance(selection, InlineFragmentNode):
                total += self.introspection_selection(selection.selection_set, path)
            elif isinstance(selection, FragmentSpreadNode) and (
                fragment := self.fragments.get(selection.name.value)
            ):
                key = (selection.name.value, path)
                if (known := self.introspection_costs.get(key)) is None:
                    known = self.introspection_selection(fragment.selection_set, path)
                    self.introspection_costs[key] = known
                total += known
        return total


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
