"""A leaderboard as a release holds it: the page's own query (`LEADERBOARD`, run by the schema,
so the rules are the page's: best score per model, the order, the ranks, the tracked flags),
written as the CSV `/benchmarks/{slug}.csv` serves (the same columns, the same cells)."""

import csv
import io
from collections.abc import Awaitable, Callable
from typing import Any

from store import BenchmarkDoc

LEADERBOARD = """
query Leaderboard(
  $slug: String!, $first: Int!, $reportedBy: [SourceKind!], $excludeSelfReported: Boolean
) {
  benchmark(slug: $slug) {
    slug
    name
    scoresRefreshedOn
    metric { name unit higherIsBetter }
    leaderboard(
      first: $first, reportedBy: $reportedBy, excludeSelfReported: $excludeSelfReported
    ) {
      rank modelName listedAs tracked score setting source publishedOn note
      interval { low high level computed } standardError sampleSize
      rankRange { best worst } reportedBy selfReported releasedAfterTestSet
    }
  }
}"""

ReadLeaderboards = Callable[[list[BenchmarkDoc]], Awaitable[dict[str, dict[str, Any]]]]
"""The `benchmark` of `LEADERBOARD` for each of these whole documents (a release's pass over the
store read them), every row, by slug: what the schema answers (the layer above computes it)."""

# Appended after the first columns: how sure the score is and who reported it.
UNCERTAINTY_COLUMNS = (
    "interval_low",
    "interval_high",
    "interval_level",
    "interval_computed",
    "standard_error",
    "sample_size",
    "rank_best",
    "rank_worst",
    "source_kind",
    "self_reported",
    "released_after_test_set",
)
LEADERBOARD_COLUMNS = (
    "rank",
    "model",
    "listed_as",
    "tracked",
    "score",
    "setting",
    "source",
    "published_on",
    "note",
    "read_on",
    *UNCERTAINTY_COLUMNS,
)
INTERVAL_ENDS = ("low", "high", "level", "computed")


def leaderboard_lines(benchmark: dict[str, Any]) -> list[tuple[Any, ...]]:
    """The CSV's lines (after its header) of a `LEADERBOARD` answer's benchmark."""
    read_on = benchmark["scoresRefreshedOn"]
    return [
        (
            row["rank"],
            row["modelName"],
            row["listedAs"],
            row["tracked"],
            row["score"],
            row["setting"],
            row["source"],
            row["publishedOn"],
            row["note"],
            read_on,
            *((row["interval"] or {}).get(end) for end in INTERVAL_ENDS),
            row["standardError"],
            row["sampleSize"],
            row["rankRange"]["best"],
            row["rankRange"]["worst"],
            row["reportedBy"],
            row["selfReported"],
            row["releasedAfterTestSet"],
        )
        for row in benchmark["leaderboard"]
    ]


def leaderboard_csv(benchmark: dict[str, Any]) -> bytes:
    return csv_bytes(LEADERBOARD_COLUMNS, leaderboard_lines(benchmark))


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""What makes a spreadsheet run a cell as a formula (OWASP, "CSV Injection")."""


def csv_cell(value: Any) -> Any:
    """As CSV readers expect it: empty for none, `true`/`false` for booleans; and text that a
    spreadsheet would run as a formula behind a `'`, as OWASP recommends (a number, a negative
    score say, is a number: only text is neutralised)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def csv_text(cell: str) -> str:
    """A text cell as it was before `csv_cell` neutralised it for spreadsheets."""
    if cell.startswith("'") and cell[1:].startswith(FORMULA_STARTS):
        return cell[1:]
    return cell


def csv_bytes(columns: tuple[str, ...], lines: list[tuple[Any, ...]]) -> bytes:
    out = io.StringIO()
    # Lines end in CRLF (RFC 4180): the writer then quotes any cell holding a CR or an LF, which
    # with a bare LF it leaves unquoted for a CR, and a reader splits the row there.
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(columns)
    writer.writerows([csv_cell(value) for value in line] for line in lines)
    return out.getvalue().encode()
