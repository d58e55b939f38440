"""List numbers written without a mark: "1 Stop giving the medicine", as a PDF's
numbered steps may be printed. The PDF reader uses it to start list items, and the
quoting step to keep a numbered run of paragraphs together."""

from __future__ import annotations

import re

_BARE_NUMBER = re.compile(r"(\d{1,2}) (?=[A-Z])")
"""A number of one or two digits, no mark after it, a space and a capital."""


def bare_number(text: str) -> int | None:
    """The number `text` opens with when no mark follows it and a capital comes after
    one space ("1 Stop giving" → 1; "1. Stop", "1 stop", "100 Stop" → None)."""
    found = _BARE_NUMBER.match(text)
    return int(found.group(1)) if found else None
