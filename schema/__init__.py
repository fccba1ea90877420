"""The GraphQL schema: Strawberry types over the store's documents and the resolvers' rules,
run through the almanac's extensions (see schema.extensions).

Other packages import from here, never from the modules inside (import-linter checks it)."""

from schema.almanac import AlmanacSchema, almanac_schema, schema
from schema.caller import Identity
from schema.context import Context, new_context
from schema.extensions.answer_reuse import answer_within, kept_answer
from schema.extensions.document_checks import known_document, parsed_or_refused
from schema.extensions.metering import LIST_SIZES, published_types
from schema.extensions.services import (
    Admitted,
    Answered,
    CachedAnswer,
    Meter,
    MeterMode,
    OperationKey,
    Services,
    operation_key,
)
from schema.json import digest, encode_json
from schema.releases import create_release
from schema.stability import breaking_changes, document_problems, published_sdl
from schema.vocabulary import UploadedFile
from store import encode_change_cursor

__all__ = [
    "LIST_SIZES",
    "Admitted",
    "AlmanacSchema",
    "Answered",
    "CachedAnswer",
    "Context",
    "Identity",
    "Meter",
    "MeterMode",
    "OperationKey",
    "Services",
    "UploadedFile",
    "almanac_schema",
    "answer_within",
    "breaking_changes",
    "create_release",
    "digest",
    "document_problems",
    "encode_change_cursor",
    "encode_json",
    "kept_answer",
    "known_document",
    "new_context",
    "operation_key",
    "parsed_or_refused",
    "published_sdl",
    "published_types",
    "schema",
]
