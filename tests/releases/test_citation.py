"""A release's citation: the BibTeX entry parses with bibtexparser (2.x) and gives back every
field, the title through LaTeX decoding character for character; the CITATION.cff validates
against the Citation File Format 1.2.0 schema and gives back the same facts.

The CFF schema is the one cffconvert (the format's own validator, `cffconvert --validate`)
ships, copied verbatim from its 2.0.0 wheel (cffconvert/schemas/1.2.0/schema.json): cffconvert
itself pins jsonschema < 4, which the rest of the dev tools cannot share, so its schema is run
with jsonschema 4's Draft 7 validator, as cffconvert runs it.
"""

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from bibtexparser.entrypoint import parse_string
from bibtexparser.middlewares import LatexDecodingMiddleware
from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec, get_default_latex_context_db

from releases.citation import bibtex, cff, citation_key
from releases.manifest import Release, ReleaseCounts, ReleaseFile

CFF_SCHEMA = Path(__file__).with_name("cff-1.2.0.schema.json")
CFF_SCHEMA_SHA256 = "0b8d22140da702d766df318dcff3a91af2f39521298dcf36d76315fd99cc169b"
BASE_URL = "https://almanac.example.org"
SITE = "Benchmark Almanac"

TITLES = [
    "Code Interpreter Benchmark, December 2026",
    # Synthetic: every LaTeX special character, unbalanced braces, quotes, YAML syntax.
    "Tricky \"release\": {A}&B 50% $x$ #1 a_b ~ ^ \\ end } {{ -- ``q'' ?`",
    "key: value # not a comment - [not, a, list] & *anchor !tag <b>",
    "Ünïcode — naïve café ✓ 🥐",
]


def release(title: str, created_at: datetime | None = None) -> Release:
    """A release of the bundled almanac (its counts and files as a release of it holds them)."""
    return Release(
        id="2026-12-02-1a2b3c4d5e6f",
        title=title,
        created_at=created_at or datetime(2026, 12, 2, 13, 45, tzinfo=UTC),
        cursor="MTIz",
        counts=ReleaseCounts(benchmarks=11, models=20, results=55),
        files=(ReleaseFile("almanac.ndjson", 1234, "a" * 64, "application/x-ndjson"),),
    )


def latex_decoder() -> LatexNodes2Text:
    """pylatexenc's LaTeX-to-text, taught the text-mode macros it lacks or prints as a
    look-alike (\\textbraceleft, \\textbraceright, \\textless, \\textgreater; \\textasciicircum
    as U+02C6, not ^)."""
    context = get_default_latex_context_db()
    context.add_context_category(
        "text-mode symbols",
        prepend=True,
        macros=[
            MacroTextSpec("textbraceleft", "{"),
            MacroTextSpec("textbraceright", "}"),
            MacroTextSpec("textasciicircum", "^"),
            MacroTextSpec("textless", "<"),
            MacroTextSpec("textgreater", ">"),
        ],
    )
    return LatexNodes2Text(latex_context=context, math_mode="verbatim")


def parsed(text: str, *, decoded: bool) -> dict[str, str]:
    middleware = [LatexDecodingMiddleware(decoder=latex_decoder())] if decoded else []
    library = parse_string(text, append_middleware=middleware)
    assert library.failed_blocks == []
    [entry] = library.entries
    assert entry.entry_type == "misc"
    return {"key": entry.key, **{field.key: field.value for field in entry.fields}}


@pytest.mark.parametrize("title", TITLES)
def test_bibtex_parses_and_gives_back_every_field(title: str) -> None:
    cited = release(title)
    url = f"{BASE_URL}/releases/2026-12-02-1a2b3c4d5e6f"

    fields = parsed(bibtex(cited, BASE_URL, SITE), decoded=True)

    assert fields == {
        "key": "almanac-2026-12-02-1a2b3c4d5e6f",
        "author": SITE,
        "title": title,
        "year": "2026",
        "month": "dec",
        "howpublished": f"<{url}>",  # pylatexenc prints \url{...} so
        "url": url,
        "version": "2026-12-02-1a2b3c4d5e6f",
        "note": f"{SITE} release 2026-12-02-1a2b3c4d5e6f, change-log cursor MTIz",
    }


def test_bibtex_escapes_each_special_character_of_the_title() -> None:
    entry = bibtex(release("& % $ # _ { } ~ ^ \\"), BASE_URL, SITE)

    title = parsed(entry, decoded=False)["title"]

    expected = (
        r"\& \% \$ \# \_ \textbraceleft{} \textbraceright{} \textasciitilde{} "
        r"\textasciicircum{} \textbackslash{}"
    )
    assert title == "{" + expected + "}"  # braced once more: styles keep the title's case
    assert entry.count("{") == entry.count("}")


def test_bibtex_names_the_site_as_one_author_and_the_month_as_a_macro() -> None:
    entry = bibtex(release("T", datetime(2027, 1, 31, 23, 59, tzinfo=UTC)), BASE_URL, SITE)

    assert "  author = {{Benchmark Almanac}},\n" in entry  # one name, not first and last
    assert "  month = jan,\n" in entry  # a macro: each style prints it in its language
    assert "  year = {2027},\n" in entry


def test_the_key_keeps_only_what_bibtex_allows() -> None:
    odd = Release(
        "2026-12-02 {x},%y", "T", datetime(2026, 12, 2, tzinfo=UTC), "c", ReleaseCounts(0, 0, 0), ()
    )

    assert citation_key(odd) == "almanac-2026-12-02xy"


@pytest.mark.parametrize(
    "base_url",
    [
        "https://a.example/a b",
        "https://a.example/{x}",
        "https://a.example/%7e",
        "https://a.example/#top",
    ],
)
def test_a_url_that_would_need_escaping_is_refused(base_url: str) -> None:
    with pytest.raises(ValueError, match="not a URL to cite"):
        bibtex(release("T"), base_url, SITE)
    with pytest.raises(ValueError, match="not a URL to cite"):
        cff(release("T"), base_url, SITE)


def cff_schema() -> dict[str, Any]:
    data = CFF_SCHEMA.read_bytes()
    assert hashlib.sha256(data).hexdigest() == CFF_SCHEMA_SHA256, "the schema was edited"
    schema: dict[str, Any] = json.loads(data)
    return schema


def cff_errors(document: Any) -> list[str]:
    validator = jsonschema.Draft7Validator(cff_schema(), format_checker=jsonschema.FormatChecker())
    return [error.message for error in validator.iter_errors(document)]


@pytest.mark.parametrize("title", TITLES)
def test_citation_cff_validates_and_gives_back_the_release(title: str) -> None:
    text = cff(release(title), BASE_URL, SITE)

    document = yaml.safe_load(text)

    assert cff_errors(document) == []
    url = f"{BASE_URL}/releases/2026-12-02-1a2b3c4d5e6f"
    assert document["cff-version"] == "1.2.0"
    assert document["type"] == "dataset"
    assert document["title"] == title
    assert document["version"] == "2026-12-02-1a2b3c4d5e6f"
    assert document["date-released"] == "2026-12-02"  # a string, as the schema asks
    assert document["url"] == url
    assert document["authors"] == [{"name": SITE, "website": BASE_URL}]
    assert document["identifiers"] == [
        {
            "type": "url",
            "value": url,
            "description": "The release, its files listed with their SHA-256.",
        }
    ]
    assert "doi" not in text  # a release has none: none is invented
    assert "If you use these data" in document["message"]


def test_the_validator_refuses_a_cff_that_breaks_the_schema() -> None:
    document = yaml.safe_load(cff(release("T"), BASE_URL, SITE))

    del document["authors"]
    document["type"] = "spreadsheet"

    assert sorted(cff_errors(document)) == [
        "'authors' is a required property",
        "'spreadsheet' is not one of ['dataset', 'software']",
    ]


def test_control_characters_and_line_separators_stay_inside_the_yaml_string() -> None:
    title = "line one\nline two\ttab \x07bell \u2028sep \ufeffbom"

    text = cff(release(title), BASE_URL, SITE)

    assert yaml.safe_load(text)["title"] == title
    assert len(text.splitlines()) == 15  # no line of the file was split
