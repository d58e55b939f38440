"""Describing the date range a query's filters select, for a reader of the result."""

from __future__ import annotations

import re
from collections.abc import Sequence

from quoteproof.model import Filter

_ISO_DATE = re.compile(r"[0-9]{4}(?:-(?:0[1-9]|1[0-2])(?:-(?:0[1-9]|[12][0-9]|3[01]))?)?")
_BOUND_OPS = frozenset({"=", "<", "<=", ">", ">="})


def is_iso_date(value: object) -> bool:
    """True for a string that is an ISO date: `YYYY`, `YYYY-MM` or `YYYY-MM-DD`."""
    return isinstance(value, str) and _ISO_DATE.fullmatch(value) is not None


def describe_period(filters: Sequence[Filter]) -> str | None:
    """Describe the date range `filters` select, or return None when they select none.

    Only filters with an ISO date value (`is_iso_date`) and operator `=`, `<`, `<=`,
    `>` or `>=` count, and they must all be on one column, with at most one bound
    on each side (or a single `=`):
    `date from 2024-01-01 to 2024-03-31` (`>=` and `<=`), `date from 2024-01-01`,
    `date until 2024-03-31`, `date after 2024-01-01` (`>`), `date before 2024-04-01`
    (`<`), `date after 2024-01-01, before 2024-04-01`, `date = 2024-02`. Other
    combinations (two columns, two lower bounds, `=` with a bound) give None.
    """
    dated = [f for f in filters if f.op in _BOUND_OPS and is_iso_date(f.value)]
    if not dated or len({f.column for f in dated}) != 1:
        return None
    column = dated[0].column
    if any(f.op == "=" for f in dated):
        return f"{column} = {dated[0].value}" if len(dated) == 1 else None
    lower = [f for f in dated if f.op in (">", ">=")]
    upper = [f for f in dated if f.op in ("<", "<=")]
    if len(lower) > 1 or len(upper) > 1:
        return None
    if lower and upper and lower[0].op == ">=" and upper[0].op == "<=":
        return f"{column} from {lower[0].value} to {upper[0].value}"
    parts = []
    if lower:
        parts.append(f"{'from' if lower[0].op == '>=' else 'after'} {lower[0].value}")
    if upper:
        parts.append(f"{'until' if upper[0].op == '<=' else 'before'} {upper[0].value}")
    return f"{column} {', '.join(parts)}"
