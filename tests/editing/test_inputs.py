"""The write side's declarations (editing.inputs) are the entities' fields: the stored documents'
types and the GraphQL inputs mirror them, field for field, and cannot drift from them."""

import dataclasses
from typing import Any, get_type_hints

import pytest
from pydantic import BaseModel

from editing import inputs as fields
from schema import inputs as graphql
from store import documents as stored

MIRRORS: list[tuple[type[BaseModel], Any, Any]] = [
    (fields.BenchmarkFields, stored.BenchmarkDoc, graphql.BenchmarkInput),
    (fields.ModelFields, stored.ModelDoc, graphql.ModelInput),
    (fields.ReadFields, stored.ReadDoc, graphql.LeaderboardReadInput),
    (fields.EntryFields, stored.EntryDoc, graphql.EntryInput),
    (fields.MetricFields, stored.MetricDoc, graphql.MetricInput),
    (fields.SourceFields, stored.SourceDoc, graphql.SourceInput),
    (fields.IntervalFields, stored.IntervalDoc, graphql.IntervalInput),
    (fields.ModelCardReportFields, stored.ModelCardReportDoc, graphql.ModelCardReportInput),
]
# Kept from an exported history on import; a read sent to the API is stamped with its writer.
IMPORT_ONLY = {"recorded_by", "recorded_at"}
# Said by a request, not kept.
REQUEST_ONLY = {"allow_removals"}


@pytest.mark.parametrize(("declared", "document", "graphql_input"), MIRRORS)
def test_the_stored_document_holds_every_declared_field(
    declared: type[BaseModel], document: Any, graphql_input: Any
) -> None:
    assert set(declared.model_fields) - REQUEST_ONLY <= set(get_type_hints(document))


@pytest.mark.parametrize(("declared", "document", "graphql_input"), MIRRORS)
def test_the_graphql_input_takes_exactly_the_declared_fields(
    declared: type[BaseModel], document: Any, graphql_input: Any
) -> None:
    taken = {field.name for field in dataclasses.fields(graphql_input)}
    assert taken == set(declared.model_fields) - IMPORT_ONLY
