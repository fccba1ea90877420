"""Every guide reads as its writer meant: no fence that swallows the text after it, no heading
lost inside a code block, every code block saying what it holds, and every shell block either
run by these tests or marked with why it cannot run here."""

import pytest

from tests.docs.guides import GUIDES, SHELL, blocks, problems

BLOCKS = [block for guide in GUIDES for block in blocks(guide)]

# docs/partners.md as it was: a closing fence with text after it (line 4 here) is no closing
# fence in CommonMark, so the block went on and took "## Authenticate" with it.
SWALLOWING = """\
Intro.

```sh
curl "$ALMANAC_URL/"
``` It takes a `POST` with a JSON body.

## Authenticate

```sh
curl "$ALMANAC_URL/graphql"
```
"""


@pytest.mark.parametrize("guide", GUIDES, ids=[guide.name for guide in GUIDES])
def test_the_guide_reads_as_written(guide: object) -> None:
    assert problems(guide.read_text(encoding="utf-8")) == []  # type: ignore[attr-defined]


def test_a_fence_that_swallows_a_section_is_found() -> None:
    assert problems(SWALLOWING) == [
        "line 5: a fence with text after it does not close the code block of line 3: what "
        "follows is swallowed",
        "line 7: the heading '## Authenticate' is inside the code block of line 3",
        "line 9: a fence with text after it does not close the code block of line 3: what "
        "follows is swallowed",
    ]


def test_a_block_never_closed_is_found() -> None:
    assert problems("# Title\n\n```sh\necho hi\n") == [
        "line 3: this code block is never closed: it runs to line 4"
    ]


@pytest.mark.parametrize("block", BLOCKS, ids=[block.name for block in BLOCKS])
def test_every_code_block_says_what_it_holds(block: object) -> None:
    assert block.info, "a code block says what it holds: ```sh, ```text, ```graphql, ..."  # type: ignore[attr-defined]


def test_only_shell_blocks_are_marked_not_run() -> None:
    marked = [block.name for block in BLOCKS if block.not_run and block.info not in SHELL]
    assert marked == []
