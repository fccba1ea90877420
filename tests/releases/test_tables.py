"""A leaderboard as of a release, as a table for a paper: built from the real leaderboard the
schema answers (the bundled Code Interpreter Benchmark, on each store), in Markdown (read back
with markdown-it-py, GitHub's table rules) and LaTeX (booktabs, caption, label), every special
character of the data escaped (a synthetic model name shows it, marked so).
"""

from datetime import UTC, datetime
from itertools import pairwise
from typing import Any

import pytest
from markdown_it import MarkdownIt
from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec, get_default_latex_context_db

from releases import LEADERBOARD
from releases.manifest import Release, ReleaseCounts
from releases.tables import (
    BenchmarkTable,
    Metric,
    TableRow,
    latex,
    markdown,
    reported_by,
    table_of,
)
from tests.conftest import GraphQLClient

RELEASE = Release(
    id="2026-12-02-1a2b3c4d5e6f",
    title="Code Interpreter Benchmark, December 2026",
    created_at=datetime(2026, 12, 2, 13, 45, tzinfo=UTC),
    cursor="MTIz",
    counts=ReleaseCounts(benchmarks=11, models=20, results=57),
    files=(),
)
GENERAL = "code-interpreter-benchmark-general"
EN = "\N{EN DASH}"
"""Markdown's range and missing-value mark (LaTeX's is `--`)."""


async def real_table(graphql: GraphQLClient, slug: str) -> BenchmarkTable:
    """The leaderboard as the page's own query answers it (the query a release runs)."""
    data = await graphql.data(LEADERBOARD, slug=slug, first=100)
    return table_of(data["benchmark"])


async def test_markdown_of_a_real_leaderboard(graphql: GraphQLClient) -> None:
    table = await real_table(graphql, GENERAL)

    text = markdown(RELEASE, table)

    assert text == MARKDOWN_GENERAL
    assert cells(text) == [
        ["Rank", "Model", "Executable rate (%)", "Reported by"],
        [f"1{EN}2", "GPT-4 (snapshot unspecified)", "82.8", "benchmark maintainer"],
        [f"1{EN}2", "Qwen-72B-Chat", "82.8", "benchmark maintainer"],
        [f"3{EN}4", "CodeLLaMA-13B-Instruct", "74.1", "benchmark maintainer"],
        [f"3{EN}4", "GPT-3.5", "74.1", "benchmark maintainer"],
        ["5", "Qwen-7B-Chat", "67.2", "benchmark maintainer"],
        [f"6{EN}8", "InternLM-20B-Chat", "65.5", "benchmark maintainer"],
        [f"6{EN}8", "Qwen-1.8B-Chat", "65.5", "benchmark maintainer"],
        [f"6{EN}8", "Qwen-14B", "65.5", "self-reported"],  # Qwen maintains it, and made Qwen-14B
        ["9", "ChatGLM3-6B", "62.1", "benchmark maintainer"],
        ["10", "LLaMA2-13B-Chat", "48.3", "benchmark maintainer"],
    ]


async def test_latex_of_a_real_leaderboard(graphql: GraphQLClient) -> None:
    table = await real_table(graphql, GENERAL)

    assert latex(RELEASE, table) == LATEX_GENERAL


async def test_a_lab_s_own_report_and_unknown_reporters_are_said_so(
    graphql: GraphQLClient,
) -> None:
    combined = await real_table(graphql, "code-interpreter-benchmark")
    mcp = await real_table(graphql, "mcp-atlas")

    # Qwen's report: of Qwen-14B, a model the almanac tracks as Qwen's, self-reported; of the
    # others (whose lab the almanac does not know), by a model developer.
    assert [row.model for row in combined.rows if row.reported_by == "self-reported"] == [
        "Qwen-14B"
    ]
    assert {row.reported_by for row in combined.rows if row.model != "Qwen-14B"} == {
        "model developer"
    }
    assert cells(markdown(RELEASE, mcp))[1] == ["1", "Gemini 4 Argon", "90.7", f"{EN}"]


# Synthetic (not a real model): every LaTeX special character and Markdown's table breakers.
TRICKY = (
    r"A&B 100% $5 #1 a_b {x} ~y ^z \w | *em* `code` [link](x) <b>hi</b> &amp; ~~s~~ ! v--2 ``q'' ?`"
)


def tricky_table() -> BenchmarkTable:
    return BenchmarkTable(
        name="Tricky & Co",
        slug="tricky_co",
        metric=Metric("Score_1", "POINTS", lower_is_better=True),
        rows=(
            TableRow(1, 1, TRICKY, 12.5, (11.02, 13.98), "third party"),
            TableRow(2, 3, "Plain", 13.0, None, ""),
            TableRow(2, 3, "Other", 13.25, (12.5, 14.0), "self-reported"),
        ),
    )


def test_latex_escapes_every_special_character_of_the_data() -> None:
    text = latex(RELEASE, tricky_table())

    row = next(line for line in text.splitlines() if line.startswith("1 & "))
    expected_name = (
        r"A\&B 100\% \$5 \#1 a\_b \{x\} \textasciitilde{}y \textasciicircum{}z "
        r"\textbackslash{}w | *em* `code` [link](x) \textless{}b\textgreater{}hi"
        r"\textless{}/b\textgreater{} \&amp; "
        r"\textasciitilde{}\textasciitilde{}s\textasciitilde{}\textasciitilde{} ! "
        r"v-{}-2 `{}`q'{}' ?{}`"  # no ligature: --, `` and '', ?` print as typed
    )
    assert row == f"1 & {expected_name} & 12.5 & [11.02, 13.98] & third party \\\\"
    assert latex_text(expected_name) == TRICKY
    assert r"\caption{Tricky \& Co leaderboard (Score\_1, points; lower is better)" in text
    assert r"\label{tab:tricky_co}" in text
    assert r"Rank & Model & Score\_1 (points) & Interval & Reported by \\" in text
    assert "2--3 & Plain & 13.0 & -- & -- \\\\" in text


def test_markdown_keeps_every_cell_whole_and_literal() -> None:
    text = markdown(RELEASE, tricky_table())

    assert cells(text) == [
        ["Rank", "Model", "Score_1 (points)", "Interval", "Reported by"],
        ["1", TRICKY, "12.5", "[11.02, 13.98]", "third party"],
        [f"2{EN}3", "Plain", "13.0", EN, EN],
        [f"2{EN}3", "Other", "13.25", "[12.500, 14.000]", "self-reported"],
    ]
    [_, caption, _] = MarkdownIt("gfm-like").parse(text.split("\n\n")[-1])
    children = caption.children or []
    assert [child.type for child in children] == ["em_open", "text", "em_close"]
    assert children[1].content.startswith(
        "Tricky & Co leaderboard (Score_1, points; lower is better), as of the release "
        "“Code Interpreter Benchmark, December 2026” (2026-12-02-1a2b3c4d5e6f)."
    )


@pytest.mark.parametrize(
    ("kind", "self_reported", "words"),
    [
        ("BENCHMARK_MAINTAINER", None, "benchmark maintainer"),
        ("MODEL_DEVELOPER", True, "self-reported"),
        ("MODEL_DEVELOPER", False, "model developer"),
        ("THIRD_PARTY", False, "third party"),
        ("ALMANAC", False, "the almanac"),
        (None, None, ""),
    ],
)
def test_who_reported_in_words(kind: str | None, self_reported: bool | None, words: str) -> None:
    assert reported_by(kind, self_reported) == words


def cells(text: str) -> list[list[str]]:
    """The table's cells as a CommonMark reader with GitHub's tables gets them: the text of
    each cell (a backslash escape undone)."""
    tokens = MarkdownIt("gfm-like").parse(text)
    rows: list[list[str]] = []
    for before, token in pairwise(tokens):
        if token.type == "tr_open":
            rows.append([])
        elif token.type == "inline" and before.type in ("th_open", "td_open"):
            rows[-1].append(plain(token))
    return rows


def plain(inline: Any) -> str:
    """An inline token's text: text alone (emphasis, code, a link or HTML would mean an escape
    was missed)."""
    assert {child.type for child in inline.children} <= {"text"}, inline.children
    return "".join(child.content for child in inline.children)


def latex_text(latex_source: str) -> str:
    """What LaTeX prints for `latex_source`, as pylatexenc reads it (taught \\textasciicircum,
    which it prints as U+02C6, and \\textless and \\textgreater, which it lacks)."""
    context = get_default_latex_context_db()
    context.add_context_category(
        "text-mode symbols",
        prepend=True,
        macros=[
            MacroTextSpec("textasciicircum", "^"),
            MacroTextSpec("textless", "<"),
            MacroTextSpec("textgreater", ">"),
        ],
    )
    return str(
        LatexNodes2Text(latex_context=context, math_mode="verbatim").latex_to_text(latex_source)
    )


# What a paper gets for the bundled General track (the real leaderboard, as released).
MARKDOWN_GENERAL = (
    "| Rank | Model | Executable rate (%) | Reported by |\n"
    "|---:|:---|---:|:---|\n"
    f"| 1{EN}2 | GPT-4 (snapshot unspecified) | 82.8 | benchmark maintainer |\n"
    f"| 1{EN}2 | Qwen-72B-Chat | 82.8 | benchmark maintainer |\n"
    f"| 3{EN}4 | CodeLLaMA-13B-Instruct | 74.1 | benchmark maintainer |\n"
    f"| 3{EN}4 | GPT-3.5 | 74.1 | benchmark maintainer |\n"
    "| 5 | Qwen-7B-Chat | 67.2 | benchmark maintainer |\n"
    f"| 6{EN}8 | InternLM-20B-Chat | 65.5 | benchmark maintainer |\n"
    f"| 6{EN}8 | Qwen-1.8B-Chat | 65.5 | benchmark maintainer |\n"
    f"| 6{EN}8 | Qwen-14B | 65.5 | self-reported |\n"
    "| 9 | ChatGLM3-6B | 62.1 | benchmark maintainer |\n"
    "| 10 | LLaMA2-13B-Chat | 48.3 | benchmark maintainer |\n"
    "\n"
    "*Code Interpreter Benchmark General leaderboard (Executable rate, %; higher is better), as of the release “Code Interpreter Benchmark, December 2026” (2026-12-02-1a2b3c4d5e6f). Ranks are ranges where scores tie or their intervals overlap.*\n"
)
LATEX_GENERAL = (
    "% Needs \\usepackage{booktabs}.\n"
    "\\begin{table}[htbp]\n"
    "\\centering\n"
    "\\caption{Code Interpreter Benchmark General leaderboard (Executable rate, \\%; higher is better), as of the release ``Code Interpreter Benchmark, December 2026'' (2026-12-02-1a2b3c4d5e6f). Ranks are ranges where scores tie or their intervals overlap.}\n"
    "\\label{tab:code-interpreter-benchmark-general}\n"
    "\\begin{tabular}{rlrl}\n"
    "\\toprule\n"
    "Rank & Model & Executable rate (\\%) & Reported by \\\\\n"
    "\\midrule\n"
    "1--2 & GPT-4 (snapshot unspecified) & 82.8 & benchmark maintainer \\\\\n"
    "1--2 & Qwen-72B-Chat & 82.8 & benchmark maintainer \\\\\n"
    "3--4 & CodeLLaMA-13B-Instruct & 74.1 & benchmark maintainer \\\\\n"
    "3--4 & GPT-3.5 & 74.1 & benchmark maintainer \\\\\n"
    "5 & Qwen-7B-Chat & 67.2 & benchmark maintainer \\\\\n"
    "6--8 & InternLM-20B-Chat & 65.5 & benchmark maintainer \\\\\n"
    "6--8 & Qwen-1.8B-Chat & 65.5 & benchmark maintainer \\\\\n"
    "6--8 & Qwen-14B & 65.5 & self-reported \\\\\n"
    "9 & ChatGLM3-6B & 62.1 & benchmark maintainer \\\\\n"
    "10 & LLaMA2-13B-Chat & 48.3 & benchmark maintainer \\\\\n"
    "\\bottomrule\n"
    "\\end{tabular}\n"
    "\\end{table}\n"
)
