"""Selecting, projecting and aggregating table rows: deterministic, no model.

Filter semantics (every filter must hold; no filters select every row):
- `=`, `!=`, `<`, `<=`, `>`, `>=` compare as numbers when the cell and the value
  both read as numbers (`values.as_number`), else as exact, case-sensitive strings
  (so ISO dates, `2024-01-31`, compare in date order);
- `contains` is a case-insensitive substring test (Unicode case folding);
- an empty cell (missing, or only whitespace) matches no filter except `!=`;
- a null value tests for emptiness: `column = null` selects rows whose cell is
  empty, `column != null` those whose cell is not; other operators take no null.
A boolean value compares with the cell text `true` / `false` (JSON's spelling).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

from quoteproof.errors import TableError
from quoteproof.model import AggregateOp, Cell, Filter, FilterOp, Scalar
from quoteproof.tables.table import Row, Table
from quoteproof.tables.values import Number, as_number, is_empty, scalar_text

FILTER_OPS: tuple[FilterOp, ...] = ("=", "!=", "<", "<=", ">", ">=", "contains")
AGGREGATE_OPS: tuple[AggregateOp, ...] = ("count", "sum", "mean", "min", "max", "distinct")

_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "=": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def _check_filter(table: Table, condition: Filter) -> int:
    """The column index of a well-formed filter; TableError saying what is wrong."""
    index = table.column_index(condition.column)
    if condition.op not in FILTER_OPS:
        raise TableError(
            f"unknown filter operator '{condition.op}'; use one of {', '.join(FILTER_OPS)}"
        )
    if condition.value is None and condition.op not in ("=", "!="):
        raise TableError(f"filter on '{condition.column}': null can only be compared with = or !=")
    return index


def cell_matches(cell: Cell, op: FilterOp, value: Scalar) -> bool:
    """Whether `cell op value` holds (see the module docstring)."""
    if value is None:
        return is_empty(cell) == (op == "=")
    if cell is None or is_empty(cell):
        return op == "!="
    if op == "contains":
        return scalar_text(value).casefold() in cell.casefold()
    left, right = as_number(cell), as_number(value)
    if left is not None and right is not None:
        return _COMPARE[op](left, right)
    return _COMPARE[op](cell, scalar_text(value))


def matching_indexes(table: Table, filters: Sequence[Filter]) -> list[int]:
    """Return the positions in `table.rows` of the rows every filter holds for.

    Raises `TableError` for an unknown column (listing the table's columns), an
    unknown operator, or a null value with an operator other than `=` / `!=`.
    O(rows x filters).
    """
    checks = [(_check_filter(table, f), f.op, f.value) for f in filters]
    return [
        position
        for position, row in enumerate(table.rows)
        if all(cell_matches(row[index], op, value) for index, op, value in checks)
    ]


def select_rows(table: Table, filters: Sequence[Filter]) -> list[Row]:
    """Return the rows (all columns, in table order) that every filter holds for.

    Raises `TableError` as `matching_indexes` does.
    """
    return [table.rows[position] for position in matching_indexes(table, filters)]


def project(table: Table, rows: Sequence[Row], columns: Sequence[str]) -> list[Row]:
    """Return `rows` (full rows of `table`) cut to `columns`, in that order; all
    columns when `columns` is empty. Raises `TableError` for an unknown column."""
    if not columns:
        return list(rows)
    indexes = [table.column_index(column) for column in columns]
    return [tuple(row[index] for index in indexes) for row in rows]


def _numbers(
    table: Table, op: str, column: str, cells: Sequence[Cell], row_numbers: Sequence[int]
) -> list[Number]:
    """The numbers in the non-empty `cells`; TableError naming the first that is not."""
    numbers = []
    for cell, number in zip(cells, row_numbers, strict=True):
        if cell is None or is_empty(cell):
            continue
        value = as_number(cell)
        if value is None:
            raise TableError(
                f"cannot {op} column '{column}' of {table.name}: row {number} holds "
                f"'{cell}', which is not a number"
            )
        numbers.append(value)
    return numbers


def _total(numbers: Sequence[Number]) -> Number:
    """Exact for integers; correctly rounded (`math.fsum`) once a float is involved."""
    if all(isinstance(n, int) for n in numbers):
        return sum(numbers)
    return math.fsum(numbers)


def _extreme(op: AggregateOp, cells: Sequence[str]) -> Scalar:
    """min / max of non-empty cells: as numbers when all are numbers, else as text."""
    if not cells:
        return None
    pick = min if op == "min" else max
    numbers = [as_number(cell) for cell in cells]
    if all(n is not None for n in numbers):
        return pick(n for n in numbers if n is not None)
    return pick(cells)


def aggregate_rows(
    table: Table,
    rows: Sequence[Row],
    op: AggregateOp,
    column: str | None = None,
    *,
    row_numbers: Sequence[int] | None = None,
) -> Scalar:
    """Aggregate `column` over `rows` (full rows of `table`).

    - `count`: the number of rows without a column, else of non-empty cells;
    - `sum`, `mean`: over the non-empty cells, which must all be numbers (else
      `TableError` naming the value and its row); an int sum of int cells, a float
      otherwise; `mean` is a float, None when no cell is non-empty (`sum` is 0);
    - `min`, `max`: as numbers (keeping ints) when every non-empty cell is one,
      else in string order; None when no cell is non-empty;
    - `distinct`: the number of distinct non-empty cell texts.

    `row_numbers` are the rows' 1-based numbers in the table, used in messages
    (default 1, 2, ...). Raises `TableError` for an unknown operation or column,
    or a missing column where the operation needs one.
    """
    if op not in AGGREGATE_OPS:
        raise TableError(f"unknown operation '{op}'; use one of {', '.join(AGGREGATE_OPS)}")
    if column is None:
        if op == "count":
            return len(rows)
        raise TableError(
            f"{op} needs a column; the columns of {table.name} are: {', '.join(table.columns)}"
        )
    index = table.column_index(column)
    cells = [row[index] for row in rows]
    present = [cell for cell in cells if cell is not None and not is_empty(cell)]
    if op == "count":
        return len(present)
    if op == "distinct":
        return len(set(present))
    if op in ("min", "max"):
        return _extreme(op, present)
    numbers = _numbers(table, op, column, cells, row_numbers or range(1, len(rows) + 1))
    if op == "sum":
        return _total(numbers)
    return math.fsum(numbers) / len(numbers) if numbers else None
