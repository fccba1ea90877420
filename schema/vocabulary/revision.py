"""What every editable object says about its last change."""

import strawberry

from store import DateTime


@strawberry.interface(
    description=(
        "An object changed through the write API. Send `revision` back as `expectedRevision` "
        "to make a change only if nobody changed the object since you read it."
    )
)
class Revised:
    revision: int = strawberry.field(description="Moves up by one with every change.")
    updated_at: DateTime = strawberry.field(description="When it last changed.")
    updated_by: str = strawberry.field(description="Who changed it last: an API key's name.")
