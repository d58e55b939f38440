"""The table rows a quote covers, read from a document's stored table structure.

A quote that crosses cells of a table (`SourceTable`, kept at ingest) is shown as
the rows it touches, a partly touched row whole, with the table's header rows
carried along when the quote leaves them out. Every cell is a span of the
document's text and its text is read from that text here, never from anywhere else.
"""

from __future__ import annotations

from collections.abc import Sequence

from quoteproof.model import QuotedRow, QuotedTable, SourceTable, TableCell, TableRow

__all__ = ["body_rows", "quoted_tables"]


def _touches(start: int, end: int, lo: int, hi: int) -> bool:
    """True when the span [lo, hi) shares a character with [start, end)."""
    return lo < end and start < hi


def _row(text: str, row: TableRow, quoted: bool) -> QuotedRow:
    cells = tuple(TableCell(lo, hi, text[lo:hi]) for lo, hi in row.cells)
    return QuotedRow(cells, row.header, quoted)


def _quoted_table(text: str, table: SourceTable, start: int, end: int) -> QuotedTable | None:
    """The rows of `table` that [start, end) touches, headers first; None unless the
    span touches at least two non-empty cells of the table."""
    touched = [row for row in table.rows if _touches(start, end, row.start, row.end)]
    cells = sum(_touches(start, end, lo, hi) for row in touched for lo, hi in row.cells if lo < hi)
    if cells < 2:
        return None
    first = table.rows.index(touched[0])
    carried = [row for row in table.rows[:first] if row.header]
    rows = [_row(text, row, False) for row in carried]
    rows += [_row(text, row, True) for row in touched]
    return QuotedTable(touched[0].start, touched[-1].end, tuple(rows))


def quoted_tables(
    text: str, tables: Sequence[SourceTable], start: int, end: int
) -> tuple[QuotedTable, ...]:
    """The tables of a document (`text`, its `tables` in text order) whose cells the
    span [start, end) crosses, each as the rows the span touches (a partly touched
    row whole) after the header rows it does not reach (`quoted` False).

    A span inside one cell, or outside every table, gives (). O(number of tables +
    cells of the tables the span touches).
    """
    found = []
    for table in tables:
        if table.rows[0].start >= end:
            break
        if table.rows[-1].end <= start:
            continue
        quoted = _quoted_table(text, table, start, end)
        if quoted is not None:
            found.append(quoted)
    return tuple(found)


def body_rows(tables: Sequence[SourceTable], start: int, end: int) -> list[tuple[int, int]]:
    """The spans of the non-header rows of `tables` (in text order) lying wholly in
    [start, end), in order. O(number of rows)."""
    return [
        (row.start, row.end)
        for table in tables
        for row in table.rows
        if not row.header and start <= row.start and row.end <= end
    ]
