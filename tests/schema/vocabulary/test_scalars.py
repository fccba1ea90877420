"""Every custom scalar says what its text follows (`@specifiedBy`), so code generators can type
it, and the published SDL carries it."""

from graphql import specified_scalar_types

from schema import published_sdl
from tests.conftest import GraphQLClient


async def test_every_custom_scalar_is_specified_by_a_standard(graphql: GraphQLClient) -> None:
    data = await graphql.data("{ __schema { types { kind name specifiedByURL } } }")
    custom = {
        item["name"]: item["specifiedByURL"]
        for item in data["__schema"]["types"]
        if item["kind"] == "SCALAR" and item["name"] not in specified_scalar_types
    }
    assert set(custom) == {"Date", "DateTime", "YearMonth", "Upload"}
    assert custom["Upload"] == "https://github.com/jaydenseric/graphql-multipart-request-spec"
    assert (
        custom["Date"] == custom["DateTime"] == "https://www.rfc-editor.org/rfc/rfc3339#section-5.6"
    )
    assert custom["YearMonth"] == "https://www.iso.org/iso-8601-date-and-time-format.html"
    for name, url in custom.items():
        assert f'scalar {name} @specifiedBy(url: "{url}")' in published_sdl()
