"""Plain-text descriptions of a `DataResult`'s parameters, shared by the renderers.

Everything returned here is unescaped text built from the result's fields (table
names, column names, filter values): each renderer escapes it as it escapes prose.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from quoteproof.model import Cell, DataResult, Filter, Scalar

__all__ = [
    "cell_text",
    "describe_aggregate",
    "describe_filters",
    "describe_rows",
    "describe_scalar",
    "preview_header",
]

# A token shown bare in a filter; anything else is shown as a JSON-style string, so
# that a value such as "US and x = y" cannot read as two conditions.
_BARE = re.compile(r"[^\s\"'\\]+")
_KEYWORDS = frozenset({"and", "where"})


def _token(text: str) -> str:
    if _BARE.fullmatch(text) and text.lower() not in _KEYWORDS:
        return text
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def describe_scalar(value: Scalar) -> str:
    """`US`, `"two words"`, `12`, `41.5`, `true`, `null`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return _token(value)


def _condition(condition: Filter) -> str:
    return f"{_token(condition.column)} {condition.op} {describe_scalar(condition.value)}"


def describe_filters(filters: Iterable[Filter]) -> str:
    """`where date >= 2024-01-01 and country = US`, or `all rows` without filters."""
    conditions = [_condition(f) for f in filters]
    return "where " + " and ".join(conditions) if conditions else "all rows"


def describe_aggregate(result: DataResult) -> str | None:
    """`count(*) = 12`, `mean(age) = 41.5`; None for a plain query."""
    if result.operation is None:
        return None
    column = "*" if result.column is None else _token(result.column)
    return f"{result.operation}({column}) = {describe_scalar(result.value)}"


def describe_rows(result: DataResult) -> str:
    """`12 matching rows, first 3 shown`, `1 matching row`, `0 matching rows`."""
    noun = "row" if result.row_count == 1 else "rows"
    text = f"{result.row_count} matching {noun}"
    if result.rows and len(result.rows) < result.row_count:
        text += f", first {len(result.rows)} shown"
    return text


def preview_header(result: DataResult) -> tuple[str, ...]:
    """The column names over the preview rows, padded with empty names to the widest row."""
    width = max((len(row) for row in result.rows), default=0)
    return result.columns + ("",) * max(0, width - len(result.columns))


def cell_text(cell: Cell) -> str:
    """A preview cell as shown: its text, or empty for a missing value."""
    return "" if cell is None else cell
