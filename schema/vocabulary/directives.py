"""The cost directives of the GraphQL cost directive spec (IBM's; Apollo, Hive, Grafbase and Hot
Chocolate read them), published in the SDL and the one source of the costs the server charges
(request_limits/cost.py reads them from the published schema)."""

import strawberry
from strawberry.schema_directive import Location


@strawberry.schema_directive(
    locations=[Location.FIELD_DEFINITION, Location.ARGUMENT_DEFINITION],
    name="cost",
    description=(
        "The weight of the field: what resolving it costs, in points; on an argument, what "
        "giving it (not null) adds to its field's weight."
    ),
)
class Cost:
    weight: str


@strawberry.schema_directive(
    locations=[Location.FIELD_DEFINITION],
    name="listSize",
    description=(
        "How many items a list field returns: the value of a slicing argument, or an assumed "
        "size (the most it holds); `sizedFields` name the lists a connection's slice sizes."
    ),
)
class ListSize:
    # Left unset, an argument is left out of the SDL.
    assumed_size: int | None = strawberry.UNSET
    slicing_arguments: list[str] | None = strawberry.UNSET
    sized_fields: list[str] | None = strawberry.UNSET
    require_one_slicing_argument: bool | None = strawberry.UNSET


def sliced_by(argument: str) -> ListSize:
    """A list of `argument` items (`first`, `last`)."""
    return ListSize(slicing_arguments=[argument], require_one_slicing_argument=False)


def page_of(*arguments: str) -> ListSize:
    """A connection whose `nodes` and `edges` hold as many items as the slicing argument given
    asks for (`first`, unless named)."""
    return ListSize(
        slicing_arguments=list(arguments or ("first",)),
        sized_fields=["nodes", "edges"],
        require_one_slicing_argument=False,
    )


def at_most(size: int) -> ListSize:
    """A list bounded when written: it holds at most `size` items."""
    return ListSize(assumed_size=size)


WRITE = Cost(weight="10")
"""A mutation's weight: its write."""
COMPUTED = Cost(weight="10")
"""A field computed from the whole leaderboard or its history each time it is asked (an alias
asks again; on a catalog row it loads the whole benchmark): about what ten rows of it read."""
RECOMPUTED = Cost(weight="100")
"""What an argument that makes its field compute a leaderboard anew (`asOf`), instead of read
the one kept, adds: as much as the 100 rows a leaderboard returns unless asked otherwise."""
