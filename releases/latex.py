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
# Pairs the fonts set as one glyph: -- and --- (dashes), `` and '' (curly quotes), ,, (low
# quotes), ?` and !` (inverted marks). An empty group between them keeps each as typed.
_LIGATURES = re.compile(r"(?<=-)(?=-)|(?<=`)(?=`)|(?<=')(?=')|(?<=,)(?=,)|(?<=[?!])(?=`)")


def escape(text: str) -> str:
    """`text` as LaTeX that prints it as it is (runs of white space, line breaks too, as one
    space: a blank line would end the paragraph; no two characters joined into a ligature)."""
    escaped = _PATTERN.sub(lambda found: _SPECIAL[found.group()], _SPACES.sub(" ", text))
    return _LIGATURES.sub("{}", escaped)  # after: the group's braces are not the data's


def escape_bibtex(text: str) -> str:
    """`text` for a BibTeX field in braces: LaTeX's escapes, with braces that stay balanced."""
    escaped = _PATTERN.sub(lambda found: _BIBTEX[found.group()], _SPACES.sub(" ", text))
    return _LIGATURES.sub("{}", escaped)
