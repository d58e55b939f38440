"""The bounds a text puts on a measured value, so that a question about values on one
side of a bound is not answered by a passage about the other side.

A protocol's table of when to stop a drug before surgery has the row "Apixaban |
30 mL/min or more | 24 hours"; "When is apixaban stopped when creatinine clearance is
below 30 mL/min?" answered with that row quotes the table truly and answers wrongly.
So the bounds of a question and of a passage are read as intervals of a unit
(`value_bounds`), and a passage that bounds a unit the question bounds, never where
the question does, is about other values (`about_other_values`).

A bound is read only where a comparison or a range stands with a unit of measure:
"below 30 mL/min", "< 30 mL/min", "30 mL/min or more", "≥ 30 mL/min", "at least
40 kg", "30 to 50 mL/min", "between 30 and 50 mL/min"; a bare amount ("200 mg") is no
bound, and ages are `llm.ages`' concern. "Below 30" leaves 30 out, "30 or more" and
"at least 30" keep it in, so the two never meet.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence

Bound = tuple[str, float, bool, float, bool]
"""A unit (lower case, without spaces) and an interval of it: its low end and whether
that end is in, its high end and whether that end is in."""

_NUMBER = r"(\d+(?:\.\d+)?)"
_UNIT = (
    r"(mL/min(?:/1\.73\s?m(?:2|²))?|mg/dL|mmol/L|[µμu]mol/L|g/dL|g/L|U/L|IU/L|kg/m(?:2|²)|"
    r"mm\s?Hg|mg/kg|mg|mcg|[µμ]g|kg|mL|bpm|°C|°F|%)"
)
_NOT = r"(?<!\bno )(?<!\bnot )"
_BELOW_OPEN = rf"(?:below|under|{_NOT}less than|lower than|fewer than|<)"
_BELOW_CLOSED = r"(?:up to|at most|(?:no|not) more than|≤|<=)"
_ABOVE_OPEN = rf"(?:above|over|{_NOT}more than|greater than|higher than|>)"
_ABOVE_CLOSED = r"(?:at least|(?:no|not) less than|≥|>=)"
_OR_MORE = r"(?:or|and) (?:more|above|over|greater|higher)"
_OR_LESS = r"(?:or|and) (?:less|below|under|fewer|lower)"
_TO = r"\s*(?:to|-|–)\s*"


def _unit(text: str) -> str:
    """A unit as bounds compare it: lower case, without spaces, one micro sign."""
    return re.sub(r"\s", "", text).lower().replace("μ", "µ").replace("²", "2")


_FORMS: Sequence[tuple[str, Callable[[re.Match[str]], Bound]]] = (
    (
        rf"\bbetween {_NUMBER}\s*(?:and|&)\s*{_NUMBER}\s*{_UNIT}",
        lambda m: (_unit(m[3]), float(m[1]), True, float(m[2]), True),
    ),
    (
        rf"(?<![\d.]){_NUMBER}{_TO}{_NUMBER}\s*{_UNIT}",
        lambda m: (_unit(m[3]), float(m[1]), True, float(m[2]), True),
    ),
    (
        rf"{_BELOW_OPEN}\s*{_NUMBER}\s*{_UNIT}",
        lambda m: (_unit(m[2]), -math.inf, False, float(m[1]), False),
    ),
    (
        rf"{_BELOW_CLOSED}\s*{_NUMBER}\s*{_UNIT}",
        lambda m: (_unit(m[2]), -math.inf, False, float(m[1]), True),
    ),
    (
        rf"{_ABOVE_OPEN}\s*{_NUMBER}\s*{_UNIT}",
        lambda m: (_unit(m[2]), float(m[1]), False, math.inf, False),
    ),
    (
        rf"{_ABOVE_CLOSED}\s*{_NUMBER}\s*{_UNIT}",
        lambda m: (_unit(m[2]), float(m[1]), True, math.inf, False),
    ),
    (
        rf"(?<![\d.]){_NUMBER}\s*{_UNIT}\s+{_OR_MORE}",
        lambda m: (_unit(m[2]), float(m[1]), True, math.inf, False),
    ),
    (
        rf"(?<![\d.]){_NUMBER}\s*{_UNIT}\s+{_OR_LESS}",
        lambda m: (_unit(m[2]), -math.inf, False, float(m[1]), True),
    ),
)
_READERS = tuple((re.compile(pattern, re.IGNORECASE), read) for pattern, read in _FORMS)
"""Each way of writing a bound and how to read it."""


def value_bounds(text: str) -> tuple[Bound, ...]:
    """The bounds `text` puts on measured values (see the module docstring)."""
    return tuple(
        dict.fromkeys(read(m) for pattern, read in _READERS for m in pattern.finditer(text))
    )


def _meet(a: Bound, b: Bound) -> bool:
    """Whether bounds `a` and `b` of one unit share a value."""
    low = max((a[1], not a[2]), (b[1], not b[2]))
    high = min((a[3], a[4]), (b[3], b[4]))
    return low[0] < high[0] or (low[0] == high[0] and not low[1] and high[1])


def about_other_values(asked: Sequence[Bound], text: str) -> bool:
    """Whether `text` bounds a unit that `asked` (the `value_bounds` of a question)
    bounds, and none of its bounds of that unit meets one of the question's: False
    when the question bounds nothing, or `text` no unit it bounds."""
    if not asked:
        return False
    said = value_bounds(text)
    for unit in {bound[0] for bound in asked}:
        mine = [b for b in said if b[0] == unit]
        theirs = [b for b in asked if b[0] == unit]
        if mine and not any(_meet(a, b) for a in theirs for b in mine):
            return True
    return False
