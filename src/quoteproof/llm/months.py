"""The months of a year a text names, so that a question about one month is not
answered by a passage about another.

A monthly report names its month once, in its title or table header ("November
2015"); "How many checks were there in Texas in December 2015?" answered with its
Texas row quotes the report truly and answers wrongly. So the months a question names
with their year (`months_named`: "December 2015", "Dec. 3, 2015", "December of 2015",
"12/03/2015", "2015-12") are compared with those of the passage an answer would quote
from. A passage mentions a month (`_mentions`) when the months of a year it names
span it, from the earliest to the latest ("from January 2019 to December 2021" spans
March 2020), or when it has the month's name and the year as words anywhere
("Apr 1 - Jun 30, 2019" mentions April 2019). A passage that names months of a year
and mentions none the question names is about another month (`about_other_months`);
one that names none is not judged, nor a question that names no month with its year.
A question whose month no retrieved source mentions is refused for it
(`missing_months`, with the key terms no source carries).
"""

from __future__ import annotations

import re
from collections.abc import Collection

from quoteproof.terms import words

__all__ = ["Month", "about_other_months", "missing_months", "months_named"]

Month = tuple[int, int]
"""A year and a month (1-12)."""

_FULL_NAMES = (
    "January", "February", "March", "April", "May", "June", "July", "August",
    "September", "October", "November", "December",
)  # fmt: skip
_NAME = (
    r"(?P<name>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|"
    r"aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b"
)
_MONTH_YEAR = re.compile(
    rf"\b{_NAME}\.?,?\s+(?:of\s+)?(?:\d{{1,2}}(?:st|nd|rd|th)?,?\s+)?"
    r"(?P<year>(?:19|20)\d{2})\b|"
    r"\b(?P<month>0?[1-9]|1[0-2])/\d{1,2}/(?P<year2>(?:19|20)\d{2})\b|"
    r"\b(?P<year3>(?:19|20)\d{2})-(?P<month3>0[1-9]|1[0-2])\b(?![-/]\d)",
    re.IGNORECASE,
)
"""A month with its year: "December 2015", "Dec. 3, 2015", "December of 2015",
"12/03/2015" (month first), "2015-12" (but not a fiscal year, "2011-12")."""


def months_named(text: str) -> frozenset[Month]:
    """The (year, month) pairs `text` names (`_MONTH_YEAR`)."""
    found = set()
    for match in _MONTH_YEAR.finditer(text):
        if match.group("name"):
            name = match.group("name").lower()[:3]
            month = next(i for i, full in enumerate(_FULL_NAMES, 1) if full.lower()[:3] == name)
            found.add((int(match.group("year")), month))
        elif match.group("month"):
            found.add((int(match.group("year2")), int(match.group("month"))))
        else:
            year, month = int(match.group("year3")), int(match.group("month3"))
            if month != (year + 1) % 100:  # "2011-12" is a fiscal year
                found.add((year, month))
    return frozenset(found)


def _mentions(text: str, named: frozenset[Month], month: Month) -> bool:
    """Whether `text` (naming the months `named`) mentions `month`: `named` spans
    it, or its name (or first three letters) and its year are words of `text`."""
    if named and min(named) <= month <= max(named):
        return True
    said = set(words(text))
    name = _FULL_NAMES[month[1] - 1].lower()
    return str(month[0]) in said and (name in said or name[:3] in said)


def about_other_months(asked: Collection[Month], text: str) -> bool:
    """True when the question names months of a year (`asked`) and `text` names
    months of a year but mentions none of those asked (`_mentions`)."""
    if not asked:
        return False
    named = months_named(text)
    return bool(named) and not any(_mentions(text, named, month) for month in asked)


def missing_months(question: str, texts: Collection[str]) -> tuple[str, ...]:
    """The months with their year that `question` names and no text of `texts`
    mentions (`_mentions`), as a refusal names them ("December 2015"), in order."""
    asked = sorted(months_named(question))
    if not asked:
        return ()
    read = [(text, months_named(text)) for text in texts]
    return tuple(
        f"{_FULL_NAMES[month - 1]} {year}"
        for year, month in asked
        if not any(_mentions(text, named, (year, month)) for text, named in read)
    )
