"""A leaderboard as of a release, as a table for a paper: Markdown and LaTeX.

Markdown: a GitHub-flavoured table (the GFM spec's tables extension) with the caption as an
emphasised line below; each cell's text has the characters that would end the cell or read as
markup backslash-escaped (CommonMark 2.4: any ASCII punctuation may be). LaTeX: a `table`
with a booktabs `tabular` (\\toprule, \\midrule, \\bottomrule: `\\usepackage{booktabs}`), its
caption citing the release's title and id, `\\label{tab:<slug>}`; every character of the data
escaped (`releases.latex`). Columns: rank (a range where the scores tie or their intervals
overlap), model, score (the metric's unit in the header), the interval where any row has one,
and who reported each score. Pure: a release and a table in, text out.
"""

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from releases.latex import escape
from releases.manifest import Release

UNITS = {"PERCENT": "%", "POINTS": "points", "ELO": "Elo"}
"""How a metric's unit (store's MetricUnit names) reads in a column's header."""
REPORTERS = {
    "BENCHMARK_MAINTAINER": "benchmark maintainer",
    "MODEL_DEVELOPER": "model developer",
    "THIRD_PARTY": "third party",
    "ALMANAC": "the almanac",
}
"""Who reported a score (store's SourceKind names), as a table says it."""


@dataclass(frozen=True)
class Metric:
    name: str
    unit: str  # a MetricUnit name: PERCENT, POINTS or ELO
    lower_is_better: bool


@dataclass(frozen=True)
class TableRow:
    """One leaderboard row: its places (best, worst: equal unless tied), the model's printed
    name, the score, its interval where known, and who reported it ("" when unknown)."""

    rank_best: int
    rank_worst: int
    model: str
    score: float
    interval: tuple[float, float] | None
    reported_by: str


@dataclass(frozen=True)
class BenchmarkTable:
    name: str
    slug: str
    metric: Metric
    rows: tuple[TableRow, ...]


def reported_by(kind: str | None, self_reported: bool | None) -> str:
    """Who reported a score, in words: "self-reported" when it is the model's own lab, else
    the kind of reporter (a SourceKind name), "" when unknown."""
    if self_reported:
        return "self-reported"
    return "" if kind is None else REPORTERS.get(kind, kind.replace("_", " ").lower())


def table_of(benchmark: Mapping[str, Any]) -> BenchmarkTable:
    """The table of a leaderboard as the schema answers it: the `benchmark` of the page's
    `LEADERBOARD` query (slug, name, metric { name unit higherIsBetter }, and each row's
    modelName, score, interval { low high }, rankRange { best worst }, reportedBy and
    selfReported), rows in the leaderboard's order."""
    metric = benchmark["metric"]
    return BenchmarkTable(
        name=benchmark["name"],
        slug=benchmark["slug"],
        metric=Metric(metric["name"], metric["unit"], not metric["higherIsBetter"]),
        rows=tuple(
            TableRow(
                rank_best=row["rankRange"]["best"],
                rank_worst=row["rankRange"]["worst"],
                model=row["modelName"],
                score=row["score"],
                interval=None
                if row["interval"] is None
                else (row["interval"]["low"], row["interval"]["high"]),
                reported_by=reported_by(row["reportedBy"], row["selfReported"]),
            )
            for row in benchmark["leaderboard"]
        ),
    )


def markdown(release: Release, benchmark: BenchmarkTable) -> str:
    """The leaderboard as a GitHub-flavoured Markdown table, its caption below."""
    header, rows = _cells(benchmark, "\N{EN DASH}", _md_escape)
    lines = [
        _md_row(header),
        "|" + "|".join("---:" if numeric else ":---" for numeric in _NUMERIC[len(header)]) + "|",
        *(_md_row(row) for row in rows),
        "",
        f"*{_md_escape(caption(release, benchmark))}*",
    ]
    return "\n".join(lines) + "\n"


def latex(release: Release, benchmark: BenchmarkTable) -> str:
    """The leaderboard as a LaTeX `table` with a booktabs `tabular`, caption and label."""
    header, rows = _cells(benchmark, "--", escape)
    spec = "".join("r" if numeric else "l" for numeric in _NUMERIC[len(header)])
    body = [" & ".join(row) + r" \\" for row in rows]
    lines = [
        "% Needs \\usepackage{booktabs}.",
        r"\begin{table}[htbp]",
        r"\centering",
        f"\\caption{{{_latex_caption(release, benchmark)}}}",
        f"\\label{{tab:{_label(benchmark.slug)}}}",
        f"\\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        " & ".join(header) + r" \\",
        r"\midrule",
        *body,
        r"\bottomrule",
        r"\end{tabular}",
        r"\end{table}",
    ]
    return "\n".join(lines) + "\n"


def caption(release: Release, benchmark: BenchmarkTable) -> str:
    """What the table shows and where it comes from: the benchmark, its metric and direction,
    and the release's title and id."""
    before, after = _caption_around(release, benchmark)
    return (
        f"{before}\N{LEFT DOUBLE QUOTATION MARK}{release.title}\N{RIGHT DOUBLE QUOTATION MARK}"
        + after
    )


def _latex_caption(release: Release, benchmark: BenchmarkTable) -> str:
    """The caption in LaTeX: each part escaped, the title in TeX's own quotes."""
    before, after = _caption_around(release, benchmark)
    return f"{escape(before)}``{escape(release.title)}''{escape(after)}"


def _caption_around(release: Release, benchmark: BenchmarkTable) -> tuple[str, str]:
    """The caption's text before and after the release's title."""
    metric = benchmark.metric
    direction = "lower" if metric.lower_is_better else "higher"
    return (
        f"{benchmark.name} leaderboard ({metric.name}, {_unit(metric.unit)}; {direction} is "
        "better), as of the release ",
        f" ({release.id}). Ranks are ranges where scores tie or their intervals overlap.",
    )


RANK, MODEL, INTERVAL, REPORTED = "Rank", "Model", "Interval", "Reported by"


_NUMERIC = {
    4: (True, False, True, False),
    5: (True, False, True, True, False),
}
"""Which columns hold numbers (set right), without and with the interval column."""


def _cells(
    benchmark: BenchmarkTable, dash: str, literal: Callable[[str], str]
) -> tuple[list[str], list[list[str]]]:
    """The header and each row's cells in the format: text from the data made `literal`, the
    format's `dash` between a rank range's ends and for what is not known."""
    intervals = any(row.interval is not None for row in benchmark.rows)
    score = f"{benchmark.metric.name} ({_unit(benchmark.metric.unit)})"
    header = [RANK, MODEL, score, *([INTERVAL] if intervals else []), REPORTED]
    rows = []
    for row in benchmark.rows:
        places = str(row.rank_best)
        if row.rank_worst != row.rank_best:
            places += f"{dash}{row.rank_worst}"
        decimals = _decimals(row.score)
        cells = [places, literal(row.model), literal(_number(row.score, decimals))]
        if intervals:
            cells.append(
                dash if row.interval is None else literal(_interval(row.interval, decimals))
            )
        cells.append(literal(row.reported_by) if row.reported_by else dash)
        rows.append(cells)
    return [literal(name) for name in header], rows


def _unit(unit: str) -> str:
    return UNITS.get(unit, unit.lower())


def _decimals(score: float) -> int:
    """The decimals the score was published with (82.8: 1; 75.0: 1; 1234: 0), at most 6."""
    text = repr(score)
    if not math.isfinite(score) or "e" in text or "." not in text:
        return 0
    return min(len(text.split(".")[1]), 6)


def _number(value: float, decimals: int) -> str:
    return f"{value:.{decimals}f}" if math.isfinite(value) else str(value)


def _interval(interval: tuple[float, float], decimals: int) -> str:
    """`[low, high]`, to one decimal more than the score (a computed end is not exact)."""
    low, high = interval
    return f"[{_number(low, decimals + 1)}, {_number(high, decimals + 1)}]"


# Markdown: `|` ends a cell even in code, `\` escapes, the rest would read as emphasis,
# code, links, HTML, entities or strikethrough (GFM); CommonMark lets a backslash escape each.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&!#$])")
_SPACES = re.compile(r"\s+")


def _md_escape(text: str) -> str:
    return _MD_SPECIAL.sub(r"\\\1", _SPACES.sub(" ", text))


def _md_row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _label(slug: str) -> str:
    """A label's key: the slug, any character LaTeX's \\label or \\ref would trip on dropped."""
    return re.sub(r"[^A-Za-z0-9:._-]", "", slug)
