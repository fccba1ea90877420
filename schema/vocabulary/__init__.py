"""What the schema's types and operations are written in: the scalars, the enums, the inputs,
the cost directives, the Node and Revised interfaces, and connections (pages and cursors).

It names no object type of the almanac: schema.types and the root operations build on it."""

from schema.vocabulary.directives import COMPUTED, RECOMPUTED, WRITE, at_most, page_of, sliced_by
from schema.vocabulary.enums import (
    AnswerFormat,
    Kind,
    Level,
    MetricUnit,
    Scoring,
    SourceKind,
    Status,
    TaskAvailability,
)
from schema.vocabulary.inputs import (
    BenchmarkInput,
    LeaderboardReadInput,
    ModelInput,
    SlugAndNameInput,
    as_plain,
    camel_case,
)
from schema.vocabulary.kept import MOST_SELECTIONS, MOST_SLICES, Kept
from schema.vocabulary.node import SlugNode, global_id, node_id
from schema.vocabulary.pagination import (
    MAX_LIST_SLICE,
    MAX_PAGE_SIZE,
    Connection,
    Edge,
    PageInfo,
    SliceArgument,
    connection,
    cursor_connection,
    decode_cursor,
    decode_key_cursor,
    encode_cursor,
    encode_key_cursor,
    page,
    slice_size,
)
from schema.vocabulary.revision import Revised
from schema.vocabulary.scalars import SCALARS, Upload, UploadedFile
from schema.vocabulary.stored_fields import StoredFields

__all__ = [
    "COMPUTED",
    "MAX_LIST_SLICE",
    "MAX_PAGE_SIZE",
    "MOST_SELECTIONS",
    "MOST_SLICES",
    "RECOMPUTED",
    "SCALARS",
    "WRITE",
    "AnswerFormat",
    "BenchmarkInput",
    "Connection",
    "Edge",
    "Kept",
    "Kind",
    "LeaderboardReadInput",
    "Level",
    "MetricUnit",
    "ModelInput",
    "PageInfo",
    "Revised",
    "Scoring",
    "SliceArgument",
    "SlugAndNameInput",
    "SlugNode",
    "SourceKind",
    "Status",
    "StoredFields",
    "TaskAvailability",
    "Upload",
    "UploadedFile",
    "as_plain",
    "at_most",
    "camel_case",
    "connection",
    "cursor_connection",
    "decode_cursor",
    "decode_key_cursor",
    "encode_cursor",
    "encode_key_cursor",
    "global_id",
    "node_id",
    "page",
    "page_of",
    "slice_size",
    "sliced_by",
]
