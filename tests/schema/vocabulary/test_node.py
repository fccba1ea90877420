"""A Benchmark's and a Model's global `id` is a value they are built with, answered by attribute
(not through relay's resolver on every object of a page), and it is relay's encoding of the
type's name and the slug, which `node` takes back."""

import base64
from typing import Any

import pytest

from schema.vocabulary import SlugNode
from tests.conftest import GraphQLClient
from tests.http.reads.test_contract import CONTRACT, GENERAL


def ids(value: Any) -> list[str]:
    """Every `id` in an answer."""
    if isinstance(value, dict):
        own = [value["id"]] if "id" in value else []
        return own + [found for item in value.values() for found in ids(item)]
    if isinstance(value, list):
        return [found for item in value for found in ids(item)]
    return []


async def test_a_page_s_ids_are_values_relay_decodes(
    graphql: GraphQLClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unused(cls: type, root: Any, *, info: Any) -> str:
        raise AssertionError("an id was resolved through relay's resolver")

    monkeypatch.setattr(SlugNode, "resolve_id", classmethod(unused))
    data = await graphql.data(CONTRACT.read_text(encoding="utf-8"), slug=GENERAL)
    found = ids(data)
    assert len(found) > 10  # the benchmark, its family, its siblings, its rows' models
    decoded = {base64.b64decode(id_).decode() for id_ in found}
    assert f"Benchmark:{GENERAL}" in decoded
    assert all(text.split(":")[0] in {"Benchmark", "Model"} for text in decoded)
    for id_ in found[:3]:
        node = await graphql.data("query($id: ID!) { node(id: $id) { id } }", id=id_)
        assert node["node"]["id"] == id_
