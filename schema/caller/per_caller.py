"""What answers with the caller's own: its budget, its webhooks and their deliveries.

Such an answer is never another request's (schema.extensions.answer_reuse keeps none of them)
nor shared by a cache in front (server.graphql.response). It is marked here once, as schema
coordinates, and found by a type-aware walk of the operation (graphql-core's TypeInfo), through
aliases, inline and named fragments and abstract types: a field of the caller's own anywhere in
the operation makes the whole answer the caller's own.
"""

from functools import cache

from graphql import (
    BREAK,
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLInterfaceType,
    GraphQLObjectType,
    GraphQLSchema,
    GraphQLUnionType,
    OperationDefinitionNode,
    TypeInfo,
    TypeInfoVisitor,
    Visitor,
    get_named_type,
    visit,
)

PER_CALLER = frozenset(
    {
        "Query.rateLimit",  # the caller's budget
        "Query.webhooks",  # the caller's webhooks (an admin key's: everyone's)
        "RateLimit",
        "Webhook",  # its URL, its owner, its deliveries
        "WebhookDelivery",
    }
)
"""Schema coordinates of what answers with the caller's own: a field (`Type.field`), or a type
(`Type`: every field of it, and every field that returns it, directly, in a list, or as one of
an interface's or a union's types). Anything that reads the caller's identity belongs here."""


@cache
def callers_fields(schema: GraphQLSchema) -> frozenset[tuple[str, str]]:
    """The (type, field) pairs of the schema that answer with the caller's own; a coordinate of
    `PER_CALLER` the schema does not have is refused (a rename must not unmark a field)."""
    types = {coordinate for coordinate in PER_CALLER if "." not in coordinate}
    for coordinate in PER_CALLER:
        type_name, _, field_name = coordinate.partition(".")
        named = schema.type_map.get(type_name)
        if named is None or (field_name and field_name not in getattr(named, "fields", {})):
            raise ValueError(f"{coordinate} is not in the schema: update PER_CALLER")
    for named in schema.type_map.values():
        if isinstance(named, GraphQLInterfaceType | GraphQLUnionType) and any(
            possible.name in types for possible in schema.get_possible_types(named)
        ):
            types.add(named.name)
    return frozenset(
        (named.name, field_name)
        for named in schema.type_map.values()
        if isinstance(named, GraphQLObjectType | GraphQLInterfaceType)
        for field_name, field in named.fields.items()
        if f"{named.name}.{field_name}" in PER_CALLER
        or named.name in types
        or get_named_type(field.type).name in types
    )


def selects_callers_own(
    schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode
) -> bool:
    """Whether the operation (a validated one of `document`) selects a field of the caller's
    own anywhere: in its selections, or in a fragment it spreads (each walked once)."""
    fragments = {
        definition.name.value: definition
        for definition in document.definitions
        if isinstance(definition, FragmentDefinitionNode)
    }
    finder = _Finder(TypeInfo(schema), callers_fields(schema))
    walked: set[str] = set()
    pending: list[OperationDefinitionNode | FragmentDefinitionNode] = [operation]
    while pending:
        visit(pending.pop(), TypeInfoVisitor(finder.types, finder))
        if finder.found:
            return True
        for name in finder.spreads - walked:
            walked.add(name)
            if (fragment := fragments.get(name)) is not None:
                pending.append(fragment)
    return False


class _Finder(Visitor):
    """Looks for a field of the caller's own, noting the fragments spread on the way."""

    def __init__(self, types: TypeInfo, own: frozenset[tuple[str, str]]) -> None:
        super().__init__()
        self.types = types
        self.own = own
        self.found = False
        self.spreads: set[str] = set()

    def enter_field(self, node: FieldNode, *_: object) -> object:
        parent = self.types.get_parent_type()
        if parent is not None and (parent.name, node.name.value) in self.own:
            self.found = True
            return BREAK
        return None

    def enter_fragment_spread(self, node: FragmentSpreadNode, *_: object) -> None:
        self.spreads.add(node.name.value)
