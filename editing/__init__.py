"""The write side: checked inputs, the documents a change makes, the change service with its
revisions, and the file format and bulk import.

Other packages import from here, never from the modules inside (import-linter checks it)."""

from editing.changes import Stamp
from editing.counts import counted
from editing.dataset import FORMAT, dataset_lines, read_dataset
from editing.editor import Editor
from editing.errors import InvalidInput, Problem
from editing.export import (
    export_dataset,
    exported_benchmark,
    exported_head,
    exported_lines,
    write_export,
)
from editing.importer import ImportSummary, ensure_seeded, import_dataset, item_count, seed
from editing.inputs import (
    MAX_CATEGORIES,
    MAX_MODEL_CARD_REPORTS,
    MAX_TRACKS,
    BenchmarkFields,
    CategoryFields,
    LabFields,
    ModelFields,
    ReadFields,
    check_slug,
    control_character,
    parse,
)
from editing.workspace import DryRunWorkspace, place_missing_leaders

__all__ = [
    "FORMAT",
    "MAX_CATEGORIES",
    "MAX_MODEL_CARD_REPORTS",
    "MAX_TRACKS",
    "BenchmarkFields",
    "CategoryFields",
    "DryRunWorkspace",
    "Editor",
    "ImportSummary",
    "InvalidInput",
    "LabFields",
    "ModelFields",
    "Problem",
    "ReadFields",
    "Stamp",
    "check_slug",
    "control_character",
    "counted",
    "dataset_lines",
    "ensure_seeded",
    "export_dataset",
    "exported_benchmark",
    "exported_head",
    "exported_lines",
    "import_dataset",
    "item_count",
    "parse",
    "place_missing_leaders",
    "read_dataset",
    "seed",
    "write_export",
]
