"""Global object identification: every Node's opaque `id` is built from its slug."""

from typing import Any

import strawberry
from strawberry import relay

NODE_ID_DESCRIPTION = "The Globally Unique ID of this object"
"""relay.Node's own words for `id`: a type's `id` says them too, so the schema is unchanged."""


class SlugNode(relay.Node):
    """A Node identified by its `slug` (its global ID encodes type name and slug).

    A type declares its `id` as a plain field (`node_id()`) and is built with its value
    (`global_id`): GraphQL then reads it as an attribute, where relay's own `id` is a resolver,
    with its `Info` and arguments, on every object (some twenty on a benchmark page). The
    type's field takes the place of relay's: both are named `id`, and the last declared is
    the one the schema keeps."""

    @classmethod
    def resolve_id(cls, root: Any, *, info: strawberry.Info) -> str:
        """Relay's way to a node's id, which it asks every Node type to have; the type's own
        `id` field answers in its place (tests/schema/vocabulary/test_node.py checks that a
        page never comes here, and the published schema that `id` reads as relay's)."""
        slug: str = root.slug
        return slug


def node_id() -> Any:
    """The `id` field of a SlugNode type, answered by attribute."""
    return strawberry.field(description=NODE_ID_DESCRIPTION)


def global_id(type_name: str, slug: str) -> relay.GlobalID:
    """The global ID of the `type_name` object of this slug, as relay encodes it."""
    return relay.GlobalID(type_name=type_name, node_id=slug)
