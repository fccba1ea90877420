"""Global object identification: every Node's opaque `id` is built from its slug."""

from typing import Any

import strawberry
from strawberry import relay


class SlugNode(relay.Node):
    """A Node identified by its `slug` (its global ID encodes type name and slug)."""

    @classmethod
    def resolve_id(cls, root: Any, *, info: strawberry.Info) -> str:
        slug: str = root.slug
        return slug
