"""Results in and out in the field's own formats: Every Eval Ever records, lm-evaluation-harness
results and Inspect logs read into the almanac's rows (through editing's one write path), and the
almanac written out as Every Eval Ever records.

Other packages import from here, never from the modules inside (import-linter checks it)."""

from interchange.eee_export import (
    eee_benchmark_bytes,
    eee_benchmark_lines,
    eee_lines,
    eee_records,
    write_eee,
)
from interchange.eee_schema import CURRENT as EEE_VERSION
from interchange.eee_schema import record_problem
from interchange.formats import ALMANAC_FORMATS, TOOL_FORMATS, detect, files_in
from interchange.imports import (
    ImportOptions,
    ImportRefused,
    ImportReport,
    RowChange,
    import_tool_files,
    read_files,
)
from interchange.inspect_log import INSTALL as INSPECT_INSTALL
from interchange.inspect_log import inspect_available
from interchange.results import FileRefused, ToolFile, ToolResult

__all__ = [
    "ALMANAC_FORMATS",
    "EEE_VERSION",
    "INSPECT_INSTALL",
    "TOOL_FORMATS",
    "FileRefused",
    "ImportOptions",
    "ImportRefused",
    "ImportReport",
    "RowChange",
    "ToolFile",
    "ToolResult",
    "detect",
    "eee_benchmark_bytes",
    "eee_benchmark_lines",
    "eee_lines",
    "eee_records",
    "files_in",
    "import_tool_files",
    "inspect_available",
    "read_files",
    "record_problem",
    "write_eee",
]
