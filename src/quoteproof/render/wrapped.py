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
the quote's first line and the next goes on in lower case and runs on itself (a
quote often starts at the end of a source line), after a colon or a Markdown hard
break, and beside a line that stands on its own: a list item, a heading or its
underline, a block quote, a table row, a code fence or indented code, a speaker's
turn, a line that opens with a date or a time, a line that lays out columns with runs
of spaces.
"""

from __future__ import annotations

import re
from itertools import pairwise
from pathlib import PurePath

from quoteproof.ingest.formats import format_for
from quoteproof.text.numbering import LIST_MARK

WRAPPED_FORMATS = frozenset({"Markdown", "text"})
"""The formats (`ingest.formats`) whose files are often hard-wrapped."""
WRAPPED_LINE_CHARS = 40
"""A line at least this long that runs on into the next was wrapped at a margin."""

_OWN_LINE = re.compile(
    r"\s*(?:#|>|\||```|~~~|[=-]{3,}\s*$|[A-Z][A-Z .'-]*:|\d{1,4}[-/:.]\d)|"
    r"(?: {4}|\t)|.*\|"
)
"""A line that stands on its own (`LIST_MARK` aside): a heading or its underline, a
block quote, a table row (a pipe anywhere), a code fence or indented code, a
speaker's turn ("PATIENT:"), a line that opens with a date or time (a log)."""
_COLUMNS = re.compile(r"\S {2,}\S|\t")
"""Columns laid out by whitespace (a run of spaces or a tab between words)."""
_SPACES = " \t"
"""The spaces a break's neighbours lose when it is drawn as one space."""


def _own_line(line: str) -> bool:
    """Whether `line` keeps the breaks around it (`_OWN_LINE`, `LIST_MARK`, or
    columns laid out by whitespace)."""
    return (
        _OWN_LINE.match(line) is not None
        or LIST_MARK.match(line) is not None
        or _COLUMNS.search(line.strip(_SPACES)) is not None
    )


def _long(line: str) -> bool:
    """Whether `line` reaches the width at which a margin wraps (`WRAPPED_LINE_CHARS`)."""
    return len(line.rstrip(_SPACES)) >= WRAPPED_LINE_CHARS


def _runs_on(line: str, following: str, after: str | None, first: bool) -> bool:
    """Whether the break between `line` and the `following` line (`after`: the line
    after that, None at the end) is a margin's wrap (see the module docstring);
    `first`: `line` is the quote's first line, which may be the end of a longer
    source line."""
    text, next_text = line.rstrip(_SPACES), following.strip(_SPACES)
    next_runs_on = after is None or _long(following)
    return (
        bool(text)
        and bool(next_text)
        and (_long(line) or (first and next_text[:1].islower() and next_runs_on))
        and not text.endswith((":", "\\"))
        and not line.endswith("  ")
        and not _own_line(line)
        and not _own_line(following)
    )


def shown_unwrapped(text: str, source_path: str) -> str:
    """`text` (a quote, its line endings `\\n`) with each break that wraps a line of
    its paragraph at a margin shown as one space, when `source_path` is a Markdown
    or plain-text file (`WRAPPED_FORMATS`); else `text` as it is. Nothing changes but
    such a line break and the spaces and tabs beside it."""
    found = format_for(PurePath(source_path).suffix)
    if found is None or found.name not in WRAPPED_FORMATS or "\n" not in text:
        return text
    lines = text.split("\n")
    shown = [lines[0]]
    for number, (line, following) in enumerate(pairwise(lines)):
        after = lines[number + 2] if number + 2 < len(lines) else None
        if _runs_on(line, following, after, first=number == 0):
            shown[-1] = f"{shown[-1].rstrip(_SPACES)} {following.lstrip(_SPACES)}"
        else:
            shown.append(following)
    return "\n".join(shown)
