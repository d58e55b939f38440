"""How table cells and filter values are read: as numbers, as text, as empty."""

from __future__ import annotations

import math
import re

from quoteproof.model import Cell, Scalar

Number = int | float

_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def as_number(value: Scalar) -> Number | None:
    """Return `value` as a number, or None when it is not one.

    Text is a number when, stripped of surrounding whitespace, it is an integer
    (`-12`, `007`: an int) or a decimal with optional exponent (`1.5`, `.5`,
    `2e3`: a float). Words (`NaN`, `inf`), digit separators (`1,000`, `1_000`),
    booleans, None and non-finite floats are not numbers.
    """
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    text = value.strip()
    try:
        if _INTEGER.fullmatch(text):
            return int(text)
        if _DECIMAL.fullmatch(text):
            number = float(text)
            return number if math.isfinite(number) else None
    except ValueError:  # an integer longer than Python converts
        return None
    return None


def scalar_text(value: Scalar) -> str:
    """The text of a filter value, as a table cell would hold it: strings as they
    are, booleans as `true`/`false` (JSON), numbers as Python writes them, None as
    `null`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def is_empty(cell: Cell) -> bool:
    """True for a missing cell (None) or one holding only whitespace."""
    return cell is None or not cell.strip()
