"""The Lab type."""

from typing import Self

import strawberry

from store import LabDoc


@strawberry.type(description="An AI lab: it makes models and benchmarks.")
class Lab:
    slug: str = strawberry.field(description="Stable URL slug, e.g. `qwen`.")
    name: str = strawberry.field(description="E.g. `Qwen`.")

    @classmethod
    def from_doc(cls, doc: LabDoc | None) -> Self | None:
        return None if doc is None else cls(slug=doc["slug"], name=doc["name"])
