"""Say how the model's words differ from the source's in ways that change meaning.

A fuzzy match can hide a changed number ("25" for "2.5"), unit ("mg" for "mcg") or
negation ("not" dropped). `describe_difference(claimed, source)` compares the two in
those three respects only and returns a short description, or None when they agree.
Word order, spelling and other wording are ignored on purpose.

Both texts are first passed through `unescape_entities` and `normalize` (casefold,
quote characters, NFKC).
Everything is O(len(claimed) + len(source)).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from decimal import Decimal, InvalidOperation

from quoteproof.quoting.normalize import normalize, unescape_entities

__all__ = ["NEEDS_NUMBER", "NUMBER", "UNITS", "describe_difference", "negations", "number_value"]

NUMBER = re.compile(r"(?<![\d.])(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:[.,]\d+)?|(?<![\w.])\.\d+")
"""A number: digits with thousands groups ("1,000") or not, then decimals after a
point or a comma ("2.5", "2,5"), or ".5". A comma before exactly three digits
groups thousands; before any other count of digits it is a decimal comma."""
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")

UNITS: dict[str, str] = {
    "mg": "mg",
    "milligram": "mg",
    "milligrams": "mg",
    "mcg": "mcg",
    "µg": "mcg",
    "μg": "mcg",
    "ug": "mcg",
    "microgram": "mcg",
    "micrograms": "mcg",
    "ng": "ng",
    "g": "g",
    "gram": "g",
    "grams": "g",
    "kg": "kg",
    "kilogram": "kg",
    "kilograms": "kg",
    "ml": "mL",
    "milliliter": "mL",
    "milliliters": "mL",
    "millilitre": "mL",
    "millilitres": "mL",
    "dl": "dL",
    "l": "L",
    "liter": "L",
    "liters": "L",
    "litre": "L",
    "litres": "L",
    "%": "%",
    "percent": "%",
    "mmhg": "mmHg",
    "iu": "IU",
    "unit": "units",
    "units": "units",
    "mmol": "mmol",
    "mol": "mol",
    "meq": "mEq",
    "kcal": "kcal",
    "mm": "mm",
    "cm": "cm",
    "m": "m",
    "km": "km",
    "second": "seconds",
    "seconds": "seconds",
    "sec": "seconds",
    "s": "seconds",
    "minute": "minutes",
    "minutes": "minutes",
    "min": "minutes",
    "mins": "minutes",
    "hour": "hours",
    "hours": "hours",
    "hr": "hours",
    "hrs": "hours",
    "h": "hours",
    "day": "days",
    "days": "days",
    "week": "weeks",
    "weeks": "weeks",
    "wk": "weeks",
    "wks": "weeks",
    "month": "months",
    "months": "months",
    "year": "years",
    "years": "years",
    "yr": "years",
    "yrs": "years",
}
"""Units keyed by their normalised (casefolded) spelling; values are the canonical
name shown."""
NEEDS_NUMBER = frozenset({"g", "l", "m", "s", "h", "mm", "cm", "km", "min", "sec", "hr", "mol"})
"""Short or ambiguous unit spellings: they count only right after a number ("5 g", "2h")."""
_UNIT_ALT = "|".join(sorted((re.escape(u) for u in UNITS), key=len, reverse=True))
_UNIT = re.compile(rf"(?P<num>\d\s?)?(?<![^\W\d_])(?P<unit>{_UNIT_ALT})(?![^\W_])")

# Negations; "n't" and "cannot" are shown as "not".
_NEGATION = re.compile(r"n't\b|\b(?:not|no|never|without|none|cannot|neither|nor)\b")


def number_value(text: str) -> Decimal | str:
    """The value of a `NUMBER` match, normalised ("2.50", "2,5" -> 2.5; "1,000" ->
    1000); other text is returned as it is."""
    plain = text.replace(",", "") if _THOUSANDS.fullmatch(text) else text.replace(",", ".")
    try:
        return Decimal(plain).normalize()
    except InvalidOperation:
        return text


def _numbers(text: str) -> list[tuple[Decimal | str, str]]:
    return [(number_value(m.group()), m.group()) for m in NUMBER.finditer(text)]


def _units(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for m in _UNIT.finditer(text):
        unit = m.group("unit")
        if unit in NEEDS_NUMBER and m.group("num") is None:
            continue
        out.append((UNITS[unit], UNITS[unit]))
    return out


def negations(text: str) -> list[str]:
    """The negations of normalised `text` (see `normalize`), in order: not, no,
    never, without, none, neither, nor, and "n't" and "cannot" as "not"."""
    found = (m.group() for m in _NEGATION.finditer(text))
    return ["not" if word in ("n't", "cannot") else word for word in found]


def _negation_items(text: str) -> list[tuple[str, str]]:
    return [(word, word) for word in negations(text)]


_Items = Sequence[tuple[Hashable, str]]


def _excess(mine: _Items, theirs: _Items) -> list[str]:
    """Display forms of items in `mine` (in order) not matched by an item of `theirs`."""
    left = Counter(key for key, _ in theirs)
    out = []
    for key, shown in mine:
        if left[key] > 0:
            left[key] -= 1
        else:
            out.append(shown)
    return out


def _compare(
    kind: str,
    extract: Callable[[str], _Items],
    claimed: str,
    source: str,
) -> str | None:
    mine, theirs = extract(claimed), extract(source)
    extra, missing = _excess(mine, theirs), _excess(theirs, mine)
    if extra and missing:
        return f"{kind} {extra[0]} in the model's words, {missing[0]} in the source"
    if extra:
        return f"{kind} {extra[0]} in the model's words, not in the source"
    if missing:
        return f"{kind} {missing[0]} in the source, not in the model's words"
    return None


def _negation_difference(claimed: str, source: str) -> str | None:
    mine, theirs = _negation_items(claimed), _negation_items(source)
    if len(mine) == len(theirs):
        return None  # same polarity; "no" for "not" is wording, not meaning
    if len(mine) > len(theirs):
        word = (_excess(mine, theirs) or [mine[-1][1]])[0]
        return f"negation '{word}' missing from the source"
    word = (_excess(theirs, mine) or [theirs[-1][1]])[0]
    return f"negation '{word}' in the source, missing from the model's words"


def describe_difference(claimed: str, source: str) -> str | None:
    """Describe how `claimed` (the model's words) differs from `source` (the span's).

    Compares, as multisets: numbers by value ("2.50" equals "2.5" and "2,5", "1,000"
    equals "1000"), units by canonical name ("µg" equals "mcg", "day" equals "days";
    one-letter and other ambiguous units count only right after a number), and the
    count of negations (not, no, never, without, none, cannot, n't, neither, nor).
    Returns None when all three agree, else one clause per differing respect joined
    by "; ", e.g. "number 25 in the model's words, 2.5 in the source" or
    "negation 'not' missing from the source".

    Complexity: O(len(claimed) + len(source)).
    """
    c, s = normalize(unescape_entities(claimed)), normalize(unescape_entities(source))
    parts = [
        _compare("number", _numbers, c, s),
        _compare("unit", _units, c, s),
        _negation_difference(c, s),
    ]
    found = [p for p in parts if p is not None]
    return "; ".join(found) if found else None
