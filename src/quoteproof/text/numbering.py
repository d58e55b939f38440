"""List marks: the mark that opens a list item ("•", "-", "2.", "(a)"), and list
numbers written without a mark ("1 Stop giving the medicine", as a PDF's numbered
steps may be printed). The PDF reader uses the bare numbers to start list items,
the quoting step both to find items and keep a numbered run of paragraphs together,
and the quote boxes the marks to keep a list's line breaks."""

from __future__ import annotations

import re

LIST_MARK = re.compile(r"^\s*(?:[•▪◦·\-*–]|\(?\d{1,2}[.)]|\(?[a-z][.)])\s+")
"""A list item's mark at the start of a line: a bullet or dash, or a number or letter
with a stop or bracket ("2.", "(3)", "b)"), then a space."""
_BARE_NUMBER = re.compile(r"(\d{1,2}) (?=[A-Z])")
"""A number of one or two digits, no mark after it, a space and a capital."""


def bare_number(text: str) -> int | None:
    """The number `text` opens with when no mark follows it and a capital comes after
    one space ("1 Stop giving" → 1; "1. Stop", "1 stop", "100 Stop" → None)."""
    found = _BARE_NUMBER.match(text)
    return int(found.group(1)) if found else None
