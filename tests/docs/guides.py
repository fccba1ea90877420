"""The guides (README.md and docs/*.md) as a CommonMark reader sees them: their code blocks,
whether each runs here, and where the Markdown does not say what its writer meant."""

import re
from dataclasses import dataclass
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.token import Token

ROOT = Path(__file__).parents[2]
GUIDES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL = {"sh", "bash", "shell", "console"}
# A shell block that cannot run in the test suite says why, on the line before it.
NOT_RUN = re.compile(r"^\s*<!--\s*not run:\s*(?P<reason>.+?)\s*-->\s*$", re.S)
FENCE = re.compile(r"^ {0,3}(```|~~~)")
HEADING = re.compile(r"^ {0,3}#{2,6} \S")


@dataclass(frozen=True)
class Block:
    guide: Path
    line: int
    """The line of its opening fence, from 1."""
    info: str
    code: str
    not_run: str | None
    """Why it cannot run here, if it says so."""

    @property
    def name(self) -> str:
        return f"{self.guide.name}:{self.line}"


def tokens(text: str) -> list[Token]:
    return MarkdownIt("commonmark").parse(text)


def blocks(guide: Path) -> list[Block]:
    """Every fenced code block of `guide`, with the reason it is not run, if one is given."""
    found = []
    parsed = tokens(guide.read_text(encoding="utf-8"))
    for index, token in enumerate(parsed):
        if token.type != "fence" or token.map is None:
            continue
        before = parsed[index - 1] if index else None
        marked = NOT_RUN.match(before.content) if before and before.type == "html_block" else None
        found.append(
            Block(
                guide,
                token.map[0] + 1,
                token.info.strip(),
                token.content,
                marked["reason"] if marked else None,
            )
        )
    return found


def problems(text: str) -> list[str]:
    """Where a fence swallows what follows it, or a heading is lost inside a code block: each
    as `line N: what`."""
    lines = text.splitlines()
    found = []
    for token in tokens(text):
        if token.type != "fence" or token.map is None:
            continue
        start, end = token.map
        last = lines[end - 1].strip() if end - 1 > start else ""
        closed = last.startswith(token.markup) and set(last) == {token.markup[0]}
        if not closed:
            found.append(
                f"line {start + 1}: this code block is never closed: it runs to line {end}"
            )
        inside = range(start + 1, end - 1 if closed else end)
        for number in inside:
            if FENCE.match(lines[number]):
                found.append(
                    f"line {number + 1}: a fence with text after it does not close the code "
                    f"block of line {start + 1}: what follows is swallowed"
                )
            elif HEADING.match(lines[number]):
                found.append(
                    f"line {number + 1}: the heading {lines[number].strip()!r} is inside the "
                    f"code block of line {start + 1}"
                )
    return found
