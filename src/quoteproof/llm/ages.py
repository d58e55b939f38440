"""The ages a text speaks of, so that a question about one age is not answered by a
passage about another.

A leaflet gives a dose for "Children aged 6 to 8 years" and says elsewhere "Do not
give to children under 6 years"; "What is the dose for children under 6?" answered
with the 6-to-8 dose quotes the leaflet truly and answers wrongly (the population
check, `llm.population`, sees "children" on both sides). So the ages of a question and
of a passage are read as ranges of years (`age_ranges`), and a passage that speaks
of ages, none of them within the question's, is about another age
(`about_other_ages`).

An age is read only where the text says it is one: after a word for people ("children
aged 6 to 8 years", "adults 65 years and older", "patients under 12"), after "aged",
"ages", "between", or "age" ("under the age of 16"), or as "a 3-year-old": "over 5
years of follow-up" and "every 4 to 6 hours" are no ages. Ranges are half-open, in
years: "6 to 8 years" is [6, 9), "under 6" [0, 6), "3-year-old" [3, 4), "12 years and
over" [12, inf); months count as twelfths of a year.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence

AgeRange = tuple[float, float]
"""Ages from the first (inclusive) to the second (exclusive), in years."""

_A = r"(?P<a>\d{1,3}(?:\.\d+)?)(?!\d)"
_B = r"(?P<b>\d{1,3}(?:\.\d+)?)(?!\d)"
_UA = r"(?P<ua>years?|yrs?|months?)"
_UB = r"(?P<ub>years?|yrs?|months?)"
_NO_OTHER_UNIT = (
    r"(?!\.\d|\s*(?:%|percent|weeks?|days?|hours?|minutes?|times?|doses?|tablets?|kg|g|mg|"
    r"lbs?|pounds?|ml|cm|km|miles?)\b)"
)
"""Not followed by a unit of anything but age: "under 2 weeks", "over 40 kg" are no ages."""
_PEOPLE = (
    r"\b(?:child(?:ren)?|kids?|infants?|bab(?:y|ies)|toddlers?|adolescents?|teens?|"
    r"teenagers?|patients|adults?|people|persons|individuals|girls|boys|women|men|those|"
    r"anyone|someone)\s+(?:who are\s+|(?:aged?|of age)\s+)?"
)
"""A word for people: a number after it, with a unit of age or "under", "over", is an
age ("children under 6", "adults 65 years and older")."""
_AGED = r"\b(?:aged?|ages)\s+"
_UNDER = r"(?:under|below|younger than|less than)"
_OVER = r"(?:over|above|older than|more than|at least)"
_TO = r"\s*(?:to|-|\u2013|through|and)\s*"
_AND_OVER = r"\s+(?:and|or)\s+(?:over|older|above|up)\b"
_AND_UNDER = r"\s+(?:and|or)\s+(?:under|younger|below)\b"


def _years(number: str, unit: str | None) -> float:
    """`number` in years (a number of months as twelfths)."""
    value = float(number)
    return value / 12 if unit and unit.lower().startswith("month") else value


def _width(unit: str | None) -> float:
    """One `unit` in years: the width of an age given in whole units."""
    return 1 / 12 if unit and unit.lower().startswith("month") else 1.0


def _between(m: re.Match[str]) -> AgeRange:
    found = m.groupdict()
    unit = found.get("ub") or found.get("ua")
    return _years(found["a"], unit), _years(found["b"], unit) + _width(unit)


def _under(m: re.Match[str]) -> AgeRange:
    found = m.groupdict()
    return 0.0, _years(found["a"], found.get("ua"))


def _over(m: re.Match[str]) -> AgeRange:
    found = m.groupdict()
    return _years(found["a"], found.get("ua")), math.inf


def _and_under(m: re.Match[str]) -> AgeRange:
    found = m.groupdict()
    return 0.0, _years(found["a"], found.get("ua")) + _width(found.get("ua"))


def _single(m: re.Match[str]) -> AgeRange:
    found = m.groupdict()
    start = _years(found["a"], found.get("ua"))
    return start, start + _width(found.get("ua"))


_FORMS: Sequence[tuple[re.Pattern[str], Callable[[re.Match[str]], AgeRange]]] = tuple(
    (re.compile(pattern, re.IGNORECASE), read)
    for pattern, read in (
        (rf"(?:{_PEOPLE}|\bbetween\s+){_A}\s*{_UA}?{_TO}{_B}\s*{_UB}", _between),
        (rf"{_AGED}{_A}{_TO}{_B}(?:\s*{_UB})?{_NO_OTHER_UNIT}", _between),
        (rf"{_PEOPLE}{_UNDER}\s+{_A}(?:\s*{_UA})?{_NO_OTHER_UNIT}", _under),
        (rf"\b{_UNDER}\s+(?:the\s+)?age\s+(?:of\s+)?{_A}(?:\s*{_UA})?", _under),
        (rf"{_PEOPLE}{_OVER}\s+{_A}(?:\s*{_UA})?{_NO_OTHER_UNIT}", _over),
        (rf"\b{_OVER}\s+(?:the\s+)?age\s+(?:of\s+)?{_A}(?:\s*{_UA})?", _over),
        (rf"\b{_A}\+?\s*{_UA}(?:\s+of\s+age)?{_AND_OVER}", _over),
        (rf"(?:{_PEOPLE}|{_AGED}){_A}\+?(?:\s+of\s+age)?{_AND_OVER}", _over),
        (rf"(?:{_PEOPLE}|{_AGED}){_A}\+", _over),
        (rf"\b{_A}\s*{_UA}(?:\s+of\s+age)?{_AND_UNDER}", _and_under),
        (rf"\b{_A}[-\s]{_UA}[-\s]olds?\b", _single),
        (
            rf"{_AGED}{_A}(?:\s*{_UA})?(?!{_TO}\d|\+|{_AND_OVER}|{_AND_UNDER}){_NO_OTHER_UNIT}",
            _single,
        ),
    )
)
"""Each way of writing an age and how to read it as a range."""


def age_ranges(text: str) -> tuple[AgeRange, ...]:
    """The ages `text` speaks of, as ranges of years (see the module docstring)."""
    found = [read(m) for pattern, read in _FORMS for m in pattern.finditer(text)]
    return tuple(dict.fromkeys(found))


def about_other_ages(asked: Sequence[AgeRange], text: str) -> bool:
    """Whether `text` speaks of ages and none of them meets one of `asked` (the
    `age_ranges` of a question): False when the question gives no age, or `text`
    none."""
    if not asked:
        return False
    said = age_ranges(text)
    return bool(said) and not any(a < d and c < b for a, b in asked for c, d in said)
