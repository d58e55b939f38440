"""The months of a year a text names, so that a question about one month is not
answered by a passage about another.

A monthly report names its month once, in its title or table header ("November
2015"); "How many checks were there in Texas in December 2015?" answered with its
Texas row quotes the report truly and answers wrongly. So the months a question names
with their year (`months_named`: "December 2015", "Dec. 2015", "12/2015", "2015-12")
are compared with those of the passage an answer would quote from: a passage that
names months of a year, the question's outside the span from the first to the last
of them ("from January 2019 to December 2021" spans March 2020), is about another
month (`about_other_months`). A passage that names none is not judged, nor a
question that names no month with its year. A question whose month no retrieved
source spans is refused for it (`missing_months`, with the key terms no source
carries).
"""

from __future__ import annotations

import re
from collections.abc import Collection

__all__ = ["Month", "about_other_months", "missing_months", "months_named"]

Month = tuple[int, int]
"""A year and a month (1-12)."""

_NAMES = (
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
)  # fmt: skip
_MONTH_YEAR = re.compile(
    r"\b(?P<name>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?,?\s+"
    r"(?:\d{1,2}(?:st|nd|rd|th)?,?\s+)?(?P<year>(?:19|20)\d{2})\b|"
    r"\b(?P<month>0?[1-9]|1[0-2])/(?:\d{1,2}/)?(?P<year2>(?:19|20)\d{2})\b|"
    r"\b(?P<year3>(?:19|20)\d{2})-(?P<month3>0[1-9]|1[0-2])\b",
    re.IGNORECASE,
)
"""A month with its year: "December 2015", "Dec. 3, 2015", "12/2015", "12/03/2015",
"2015-12"."""


def months_named(text: str) -> frozenset[Month]:
    """The (year, month) pairs `text` names (`_MONTH_YEAR`)."""
    found = set()
    for match in _MONTH_YEAR.finditer(text):
        if match.group("name"):
            month = _NAMES.index(match.group("name").lower()) + 1
            found.add((int(match.group("year")), month))
        elif match.group("month"):
            found.add((int(match.group("year2")), int(match.group("month"))))
        else:
            found.add((int(match.group("year3")), int(match.group("month3"))))
    return frozenset(found)


def about_other_months(asked: Collection[Month], text: str) -> bool:
    """True when the question names months of a year (`asked`) and `text` names
    months of a year, none of those asked within the span from the earliest of them
    to the latest."""
    if not asked:
        return False
    named = months_named(text)
    return bool(named) and not any(_spans(named, month) for month in asked)


_FULL_NAMES = (
    "January", "February", "March", "April", "May", "June", "July", "August",
    "September", "October", "November", "December",
)  # fmt: skip


def _spans(named: frozenset[Month], month: Month) -> bool:
    return bool(named) and min(named) <= month <= max(named)


def missing_months(question: str, texts: Collection[str]) -> tuple[str, ...]:
    """The months with their year that `question` names and no text of `texts` spans
    (from the earliest month of a year it names to the latest), as a refusal names
    them ("December 2015"), in order."""
    asked = sorted(months_named(question))
    if not asked:
        return ()
    named = [months_named(text) for text in texts]
    return tuple(
        f"{_FULL_NAMES[month - 1]} {year}"
        for year, month in asked
        if not any(_spans(these, (year, month)) for these in named)
    )
