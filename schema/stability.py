"""The published schema, and the rule that keeps it stable for partners.

A change that could break a client (graphql-core's breaking changes: a field, argument, type or
enum value removed, a type changed, an argument made required) is refused, except the removal of
a field, argument or enum value that the published schema already marks `@deprecated` with a
reason: clients were told, and had time to move. Dangerous changes (a default value changed, an
enum value or union member added, ...) are allowed and worth a line in CHANGELOG.md.
"""

import re

from graphql import (
    BreakingChangeType,
    GraphQLEnumType,
    GraphQLSchema,
    GraphQLSyntaxError,
    build_schema,
    find_breaking_changes,
    parse,
    validate,
)

from schema.almanac import schema
from schema.extensions.metering import published_types

REMOVALS = {
    BreakingChangeType.FIELD_REMOVED,
    BreakingChangeType.ARG_REMOVED,
    BreakingChangeType.VALUE_REMOVED_FROM_ENUM,
}
# graphql-core names what was removed by its schema coordinate: "Field Type.field was removed.",
# "Argument Type.field(arg:) was removed.", "Enum value Enum.VALUE was removed."
_REMOVED = re.compile(r"^(?:Field|Argument|Enum value) (\w+)\.(\w+)(?:\((\w+):\))? was removed\.$")


def published_sdl() -> str:
    """The schema as served at /schema.graphql and committed as schema.graphql."""
    return schema.as_str() + "\n"


def document_problems(text: str) -> list[str]:
    """Why a client's document would not run on the published schema (none if it would)."""
    try:
        document = parse(text)
    except GraphQLSyntaxError as error:
        return [error.message]
    return [error.message for error in validate(published_types(schema), document)]


def breaking_changes(published: str, current: str) -> list[str]:
    """What `current` breaks for clients of `published`, deprecated removals excepted."""
    old, new = build_schema(published), build_schema(current)
    return [
        change.description
        for change in find_breaking_changes(old, new)
        if not (change.type in REMOVALS and _was_deprecated(old, change.description))
    ]


def _was_deprecated(old: GraphQLSchema, description: str) -> bool:
    match = _REMOVED.match(description)
    if match is None:
        return False
    type_name, member_name, argument_name = match.groups()
    owner = old.get_type(type_name)
    if isinstance(owner, GraphQLEnumType):
        member = owner.values.get(member_name)
    else:
        member = getattr(owner, "fields", {}).get(member_name)
        if member is not None and argument_name is not None:
            member = member.args.get(argument_name)
    return bool(member is not None and member.deprecation_reason)
