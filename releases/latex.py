"""Text from the data, made literal for LaTeX and BibTeX: each special character escaped.

LaTeX's ten special characters: ``& % $ # _ { } ~ ^ \\``,
and ``< >``, which the default font encoding would print as other glyphs.
In BibTeX a brace counts toward the field's balance even behind a backslash, so a lone ``\\{``
would end or break the field: there braces become ``\\textbraceleft{}``, balanced in itself.
"""

import re

_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    # Not special, but LaTeX's default font encoding (OT1) prints them as ¡ and ¿.
    "<": r"\textless{}",
    ">": r"\textgreater{}",
}
_BIBTEX = {**_SPECIAL, "{": r"\textbraceleft{}", "}": r"\textbraceright{}"}
_PATTERN = re.compile(r"[\\&%$#_{}~^<>]")
_SPACES = re.compile(r"\s+")


def escape(text: str) -> str:
    """`text` as LaTeX that prints it as it is (runs of white space, line breaks too, as one
    space: a blank line would end the paragraph)."""
    return _PATTERN.sub(lambda found: _SPECIAL[found.group()], _SPACES.sub(" ", text))


def escape_bibtex(text: str) -> str:
    """`text` for a BibTeX field in braces: LaTeX's escapes, with braces that stay balanced."""
    return _PATTERN.sub(lambda found: _BIBTEX[found.group()], _SPACES.sub(" ", text))
