"""How to cite a release: a BibTeX entry and a CITATION.cff file.

BibTeX: a `@misc` entry (the classic styles have no dataset type; biblatex reads `@misc`
with `version` and `url` too), its key from the release's id, every field's text escaped for
LaTeX (`releases.latex`). CITATION.cff: Citation File Format 1.2.0
(https://citation-file-format.github.io/1.2.0/schema.json), `type: dataset`, the site as its
author (an entity), no DOI (a release has none: its id and the hashes in its manifest are what
identify it). Pure: the release's manifest in, text out.
"""

import re

from releases.latex import escape_bibtex
from releases.manifest import Release

MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
"""BibTeX's month macros: every style prints them in its own language."""
_KEY_UNSAFE = re.compile(r"[^A-Za-z0-9_.:-]")
_URL_UNSAFE = re.compile(r"[\s{}\\\"<>%#]")


def release_url(release: Release, base_url: str) -> str:
    """Where the release's files are served: `{base_url}/releases/{id}`."""
    url = f"{base_url.rstrip('/')}/releases/{release.id}"
    if _URL_UNSAFE.search(url):
        # A URL goes into BibTeX (inside \url, itself in a field) and YAML as it is: it must
        # hold nothing that either would read as syntax.
        raise ValueError(f"not a URL to cite: {url!r}")
    return url


def citation_key(release: Release) -> str:
    """The entry's key: `almanac-` and the release's id (BibTeX keys take no spaces, commas or
    braces; an id is already safe, and anything else is dropped)."""
    return "almanac-" + _KEY_UNSAFE.sub("", release.id)


def bibtex(release: Release, base_url: str, site_name: str) -> str:
    """The release as one BibTeX `@misc` entry: author (the site, braced as one name), title,
    year and month of creation (UTC), howpublished and url, version (the id), and a note with
    the id and the change-log cursor it froze."""
    url = release_url(release, base_url)
    created = release.created_at
    site = escape_bibtex(site_name)
    fields = [
        # Braced twice: the site is one name (not a first and last), the title keeps its case.
        ("author", f"{{{{{site}}}}}"),
        ("title", f"{{{{{escape_bibtex(release.title)}}}}}"),
        ("year", f"{{{created.year}}}"),
        ("month", MONTHS[created.month - 1]),
        ("howpublished", f"{{\\url{{{url}}}}}"),
        ("url", f"{{{url}}}"),
        ("version", f"{{{escape_bibtex(release.id)}}}"),
        (
            "note",
            f"{{{site} release {escape_bibtex(release.id)}, "
            f"change-log cursor {escape_bibtex(release.cursor)}}}",
        ),
    ]
    body = ",\n".join(f"  {name} = {value}" for name, value in fields)
    return f"@misc{{{citation_key(release)},\n{body}\n}}\n"


def cff(release: Release, base_url: str, site_name: str) -> str:
    """The release's CITATION.cff (CFF 1.2.0): what to cite it as (title, version, the date
    released, url) and who by (the site, an entity). Every string is a YAML double-quoted
    scalar, so no title can be read as YAML syntax."""
    url = release_url(release, base_url)
    lines = [
        "cff-version: 1.2.0",
        f"message: {_quoted(f'If you use these data, please cite this release of {site_name}.')}",
        "type: dataset",
        f"title: {_quoted(release.title)}",
        f"version: {_quoted(release.id)}",
        f"date-released: {_quoted(release.created_at.date().isoformat())}",
        f"url: {_quoted(url)}",
        f"abstract: {_quoted(_abstract(release, site_name))}",
        "authors:",
        f"  - name: {_quoted(site_name)}",
        f"    website: {_quoted(base_url.rstrip('/'))}",
        "identifiers:",
        "  - type: url",
        f"    value: {_quoted(url)}",
        f"    description: {_quoted('The release, its files listed with their SHA-256.')}",
    ]
    return "\n".join(lines) + "\n"


def _abstract(release: Release, site_name: str) -> str:
    counts = release.counts
    return (
        f"{site_name} frozen at change-log cursor {release.cursor}: {counts.benchmarks} "
        f"benchmarks, {counts.models} models, {counts.results} leaderboard rows."
    )


def _quoted(text: str) -> str:
    """`text` as a YAML double-quoted scalar (YAML 1.2, 7.3.1): backslash and quote escaped,
    and every character YAML does not allow as it is (controls, DEL, C1, line and paragraph
    separators, BOM) as an escape."""
    out = []
    for char in text:
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif code < 0x20 or 0x7F <= code <= 0x9F:
            out.append(f"\\x{code:02x}")
        elif code in (0x2028, 0x2029, 0xFEFF, 0xFFFE, 0xFFFF) or 0xD800 <= code <= 0xDFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'
