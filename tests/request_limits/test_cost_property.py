"""The rule every price keeps, as a property over generated documents: a request is never charged
less than the objects its answer holds. Each document is drawn from the schema itself (any
query field, introspection included, with slicing arguments given or not), sent to the real app
over the bundled almanac, and its answer's objects counted."""

from typing import Any

import httpx
import pytest
from graphql import (
    GraphQLField,
    GraphQLInterfaceType,
    GraphQLNamedType,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLUnionType,
    get_named_type,
    is_leaf_type,
)
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from schema import schema
from schema.extensions.metering import published_types
from server.settings import Settings
from tests.request_limits.test_cost import objects_in

TYPES = published_types(schema)

PROPERTY = hypothesis_settings(
    max_examples=40,
    derandomize=True,  # the same examples every run: a failure is a bug, never a fluke
    database=None,
    deadline=None,  # no timing assertions
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

SLUGS = {
    ("Query", "benchmark"): ["code-interpreter-benchmark", "code-interpreter-benchmark-general"],
    ("Query", "model"): ["qwen-14b", "no-such-model"],
}
"""Values for the required arguments a generated document may give: what the bundled almanac
holds (and one it does not)."""
LEFT_OUT = {"rateLimit", "webhooks", "node", "nodes", "modelCardCoverage"}
"""Root fields not drawn: the caller's own (`rateLimit`, `webhooks`), or ones that need ids."""
SLICES = st.none() | st.integers(min_value=0, max_value=4)
"""A slicing argument's value, or none given: small, so the answers stay small."""


@pytest.fixture
def settings() -> Settings:
    """A budget no generated document exhausts: each is charged, never throttled."""
    return Settings(anonymous_bucket_capacity=10_000_000, anonymous_restore_rate=1)


def arguments(draw: st.DrawFn, parent: str, name: str, field: GraphQLField) -> str | None:
    """The field's arguments written out, or None if it needs one no value is known for."""
    given = []
    for argument_name, argument in field.args.items():
        if argument_name in ("first", "last"):
            value = draw(SLICES)
            if value is not None:
                given.append(f"{argument_name}: {value}")
        elif argument_name == "asOf":
            if draw(st.booleans()):
                given.append('asOf: "2026-01-01"')
        elif isinstance(argument.type, GraphQLNonNull) and argument.default is None:
            if (known := SLUGS.get((parent, name))) is None:
                return None
            given.append(f'{argument_name}: "{draw(st.sampled_from(known))}"')
    return f"({', '.join(given)})" if given else ""


def selection(draw: st.DrawFn, parent: GraphQLNamedType, depth: int) -> str:
    """A selection on `parent`: a few of its fields, objects nested up to `depth` more levels."""
    if isinstance(parent, GraphQLUnionType | GraphQLInterfaceType):
        possible = draw(st.sampled_from(TYPES.get_possible_types(parent)))
        return f"__typename ... on {possible.name} {{ {selection(draw, possible, depth)} }}"
    assert isinstance(parent, GraphQLObjectType)
    names = sorted(
        name
        for name, field in parent.fields.items()
        if not (parent is TYPES.query_type and name in LEFT_OUT)
        and (depth > 0 or is_leaf_type(get_named_type(field.type)))
    )
    chosen = draw(st.lists(st.sampled_from(names), min_size=1, max_size=3, unique=True))
    parts = ["__typename"]
    for name in chosen:
        field = parent.fields[name]
        written = arguments(draw, parent.name, name, field)
        if written is None:
            continue
        inner = get_named_type(field.type)
        below = "" if is_leaf_type(inner) else f" {{ {selection(draw, inner, depth - 1)} }}"
        parts.append(f"{name}{written}{below}")
    return " ".join(parts)


INTROSPECTION = st.sampled_from(
    [
        "__schema { types { name fields { name args { name type { name ofType { name } } } } } }",
        "__schema { queryType { name } directives { name args { name } } }",
        '__type(name: "Benchmark") { fields { name type { kind ofType { name } } } }',
        '__type(name: "ChangeKind") { enumValues { name } }',
        "__schema { types { kind interfaces { name } possibleTypes { name } inputFields { name } } }",
    ]
)


@st.composite
def documents(draw: st.DrawFn) -> str:
    """A query of the schema: a few root fields, and maybe an introspection."""
    assert TYPES.query_type is not None
    root = selection(draw, TYPES.query_type, depth=3)
    if draw(st.booleans()):
        root += " " + draw(INTROSPECTION)
    return f"{{ {root} }}"


@PROPERTY
@given(document=documents())
async def test_a_price_is_never_below_the_objects_returned(
    client: httpx.AsyncClient, document: str
) -> None:
    response = await client.post("/graphql", json={"query": document})
    body: dict[str, Any] = response.json()
    charged = body["extensions"]["cost"]["requestedQueryCost"]
    returned = objects_in(body.get("data")) - 1 if body.get("data") else 0
    assert charged >= returned, f"{returned} objects for {charged} points: {document}"
