"""A leaderboard as a CSV: the download `/benchmarks/{slug}.csv` writes the answer of the page's
own query (`LEADERBOARD`, run by the schema); a release writes the same lines straight from a
benchmark's document by the rules the page's types call (resolvers: best score per model, the
order, the ranks and their ranges, the intervals, the tracked flags, who reported each score),
without the types between (a release's 10,000 leaderboards: the types' rows and the answer's
dicts were half its time). The same columns, the same cells: tested byte for byte."""

import csv
import io
from collections.abc import Iterable
from typing import Any

from resolvers import (
    Board,
    TrackedModels,
    leaderboard,
    released_after_test_set,
    reported_by,
    self_reported,
)
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
LEADERBOARD_HEADER = ",".join(LEADERBOARD_COLUMNS) + "\r\n"


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


def board_lines(doc: BenchmarkDoc, tracked: TrackedModels, first: int) -> list[str]:
    """The CSV's lines (after its header, each ending in CRLF) of the first `first` rows of the
    benchmark's leaderboard, its entries' tracked models in `tracked`: what `csv_bytes` writes
    of `leaderboard_lines` of the `LEADERBOARD` answer, each cell as `csv_cell` gives it, quoted
    as the csv module quotes it (`_text`): formatted here, not a cell at a time by the csv
    module (a release writes 10,000 leaderboards)."""
    metric = doc["metric"]
    unit, higher_is_better = metric["unit"], metric["higher_is_better"]
    rows = leaderboard(doc["entries"], higher_is_better=higher_is_better, tracked=tracked)
    board = Board(rows, unit=unit, higher_is_better=higher_is_better)
    read_on = _text(doc["scores_refreshed_on"])
    # Whether a row's model came out after the test set is a question of its release month;
    # whether the row is self-reported, of who reported it (its kind) and the model's lab: each
    # asked once a leaderboard (of the few months, kinds and labs), not once a row.
    contaminated: dict[str | None, str] = {}
    own: dict[tuple[str | None, str | None], str] = {}
    kinds: dict[str | None, str | None] = {}  # by the entry's own reporter: `reported_by`
    texts = _Texts()  # settings, sources, dates, notes and kinds: the same few on many rows
    lines = []
    for row, interval, place in zip(rows[:first], board.intervals, board.ranges, strict=False):
        rank, name, model, entry = row
        released = lab = None
        if model is not None:
            released = model["released_on"]
            lab = None if model["lab"] is None else model["lab"]["slug"]
        if (after := contaminated.get(released)) is None:
            after = contaminated[released] = _flag(released_after_test_set(model, doc))
        if (reporter := entry.get("reported_by")) in kinds:
            kind = kinds[reporter]
        else:
            kind = kinds[reporter] = reported_by(entry, doc)
        if (mine := own.get((kind, lab))) is None:
            mine = own[kind, lab] = _flag(self_reported(entry, model, doc))
        listed = entry["model_name"]
        shown = _text(listed)
        standard_error, sample_size = entry.get("standard_error"), entry.get("sample_size")
        cells = (
            NO_INTERVAL
            if interval is None
            else f"{interval.low},{interval.high},{interval.level},"
            f"{'true' if interval.computed else 'false'}"
        )
        lines.append(
            f"{rank},{shown if name is listed else _text(name)},{shown},"
            f"{'false' if model is None else 'true'},{entry['score']},"
            f"{texts[entry['setting']]},{texts[entry['source']]},"
            f"{texts[entry['published_on']]},{texts[entry.get('note')]},{read_on},{cells},"
            f"{'' if standard_error is None else standard_error},"
            f"{'' if sample_size is None else sample_size},{place.best},{place.worst},"
            f"{texts[kind]},{mine},{after}\r\n"
        )
    return lines


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


NO_INTERVAL = ",,,"
"""The four interval cells of a row without one."""


FORMULA_FIRST = "".join(FORMULA_STARTS)


def _text(value: str | None) -> str:
    """`csv_cell` of a text cell (or none), as the csv module writes it: quoted (its quotes
    doubled) if it holds a comma, a quote, a CR or an LF."""
    if not value:
        return ""
    if value[0] in FORMULA_FIRST:
        value = "'" + value
    if '"' in value or "," in value or "\n" in value or "\r" in value:
        return '"' + value.replace('"', '""') + '"'
    return value


class _Texts(dict[str | None, str]):
    """`_text` of each value, made when first asked for."""

    def __missing__(self, value: str | None) -> str:
        made = self[value] = _text(value)
        return made


def _flag(value: bool | None) -> str:
    """`csv_cell` of a flag (or none)."""
    return "" if value is None else "true" if value else "false"


def csv_text(cell: str) -> str:
    """A text cell as it was before `csv_cell` neutralised it for spreadsheets."""
    if cell.startswith("'") and cell[1:].startswith(FORMULA_STARTS):
        return cell[1:]
    return cell


def csv_bytes(columns: tuple[str, ...], lines: list[tuple[Any, ...]]) -> bytes:
    return csv_file(columns, ([csv_cell(value) for value in line] for line in lines))


def board_csv(lines: list[str]) -> bytes:
    """A release's leaderboard CSV: the header, then `board_lines`'s lines."""
    return "".join([LEADERBOARD_HEADER, *lines]).encode()


def csv_file(columns: tuple[str, ...], cells: Iterable[Iterable[Any]]) -> bytes:
    """The CSV of lines whose cells are as `csv_cell` gives them."""
    out = io.StringIO()
    # Lines end in CRLF (RFC 4180): the writer then quotes any cell holding a CR or an LF, which
    # with a bare LF it leaves unquoted for a CR, and a reader splits the row there.
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(columns)
    writer.writerows(cells)
    return out.getvalue().encode()
