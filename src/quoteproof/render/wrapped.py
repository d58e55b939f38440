"""Showing a quote of a hard-wrapped paragraph as its reader reads it.

A Markdown or plain-text file is often wrapped by hand at a margin: its paragraphs
hold a line break every 70 to 80 characters that the writer did not mean as one
(rendered Markdown shows such a soft break as a space). A quote keeps them, since its
text is the source's own; drawn in a box narrower than the source's lines, a quote
would then break twice per line ("The / instructor who taught the ... / summer, and /
no replacement ..."). `shown_unwrapped` shows each such break as a space, for the
quote boxes of the terminal and the web page only: the quote's text, its receipt and
the JSON and Markdown answers keep every character. A break stays a break wherever it
may mean one: after a short line (an address, a list without marks), unless it is
the quote's first line and the next goes on in lower case (a quote often starts at
the end of a source line), after a colon or a Markdown hard break, before a list
item, heading, block quote, table row or code fence, and beside a line that lays out
columns with runs of spaces.
"""

from __future__ import annotations

import re
from itertools import pairwise
from pathlib import PurePath

from quoteproof.ingest.formats import format_for

WRAPPED_FORMATS = frozenset({"Markdown", "text"})
"""The formats (`ingest.formats`) whose files are often hard-wrapped."""
WRAPPED_LINE_CHARS = 40
"""A line at least this long that runs on into the next was wrapped at a margin."""

_BLOCK_START = re.compile(r"\s*(?:[-*+•]\s|\d{1,3}[.)]\s|[a-z][.)]\s|#|>|\||```|~~~)")
"""A line that starts a block of its own: a list item, a heading, a block quote, a
table row or a code fence."""
_COLUMNS = re.compile(r"\S {2,}\S|\t")
"""Columns laid out by whitespace (a run of spaces or a tab between words)."""


def _runs_on(line: str, following: str, first: bool) -> bool:
    """Whether the break between `line` and the `following` line is a margin's wrap
    (see the module docstring); `first`: `line` is the quote's first line, which may
    be the end of a longer source line."""
    text, next_text = line.rstrip(), following.strip()
    return (
        (len(text) >= WRAPPED_LINE_CHARS or (first and next_text[:1].islower()))
        and bool(text)
        and bool(next_text)
        and not text.endswith((":", "\\"))
        and not line.endswith("  ")
        and _BLOCK_START.match(following) is None
        and _COLUMNS.search(line.strip()) is None
        and _COLUMNS.search(next_text) is None
    )


def shown_unwrapped(text: str, source_path: str) -> str:
    """`text` (a quote, its line endings `\\n`) with each break that wraps a line of
    its paragraph at a margin shown as one space, when `source_path` is a Markdown
    or plain-text file (`WRAPPED_FORMATS`); else `text` as it is. No character but a
    line break, and the spaces around it, changes."""
    found = format_for(PurePath(source_path).suffix)
    if found is None or found.name not in WRAPPED_FORMATS or "\n" not in text:
        return text
    lines = text.split("\n")
    shown = [lines[0]]
    for number, (line, following) in enumerate(pairwise(lines)):
        if _runs_on(line, following, first=number == 0):
            shown[-1] = f"{shown[-1].rstrip()} {following.lstrip()}"
        else:
            shown.append(following)
    return "\n".join(shown)
