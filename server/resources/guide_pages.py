"""A guide as a web page: its Markdown rendered as CommonMark (markdown-it-py, the reader the
docs tests check the guides with), any HTML in it escaped, in a plain page."""

import html
import re
from pathlib import Path

from markdown_it import MarkdownIt

# The guides' notes to their tests (`<!-- not run: ... -->`) are for the tests, not the reader.
NOTE = re.compile(r"^[ \t]*<!--.*?-->[ \t]*\n", re.M | re.S)
PAGE = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>{title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="/favicon.ico" type="image/svg+xml">
<style>body{{font:16px/1.5 system-ui,sans-serif;max-width:50rem;margin:2rem auto;padding:0 1rem}}
code{{background:#f3f3f3;padding:0 .2em}}pre{{background:#f3f3f3;padding:.5rem;overflow:auto}}
pre code{{padding:0}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:.2rem .4rem}}
</style></head>
<body>
<p><a href="/">Benchmark Almanac API</a> · <a href="{source}">this guide as Markdown</a></p>
{body}
</body>
</html>
"""

# CommonMark with GitHub's tables; raw HTML is shown as text, never passed through.
MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable("table")


def guide_page(path: Path, source: str) -> str:
    """The guide at `path` as an HTML page, linking to its Markdown at `source`."""
    text = NOTE.sub("", path.read_text(encoding="utf-8"))
    title = next((line[2:] for line in text.splitlines() if line.startswith("# ")), path.stem)
    return PAGE.format(
        title=html.escape(title), source=html.escape(source), body=MARKDOWN.render(text)
    )
