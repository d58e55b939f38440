"""The table rows a quote covers, read from a document's stored table structure.

A quote that crosses cells of a table (`SourceTable`, kept at ingest) is shown as
the rows it touches, a partly touched row whole, with the table's header rows
carried along when the quote leaves them out (a quote reaching only header rows
shows no table). Every cell is a span of the
document's text and its text is read from that text here, never from anywhere else.
"""

from __future__ import annotations

from collections.abc import Sequence

from quoteproof.model import Chunk, QuotedRow, QuotedTable, SourceTable, TableCell, TableRow

__all__ = ["body_rows", "chunk_rows", "quoted_tables"]


def _touches(start: int, end: int, lo: int, hi: int) -> bool:
    """True when the span [lo, hi) shares a character with [start, end)."""
    return lo < end and start < hi


def _row(text: str, row: TableRow, quoted: bool) -> QuotedRow:
    cells = tuple(TableCell(lo, hi, text[lo:hi]) for lo, hi in row.cells)
    return QuotedRow(cells, row.header, quoted)


def _quoted_table(text: str, table: SourceTable, start: int, end: int) -> QuotedTable | None:
    """The rows of `table` that [start, end) touches from its first touched body
    (non-header) row on, after the header rows above that row; None unless the
    span touches a body row and at least two non-empty cells of the table."""
    touched = [_touches(start, end, row.start, row.end) for row in table.rows]
    body = [n for n, row in enumerate(table.rows) if touched[n] and not row.header]
    if not body:
        return None
    cells = sum(
        _touches(start, end, lo, hi)
        for n, row in enumerate(table.rows)
        if touched[n]
        for lo, hi in row.cells
        if lo < hi
    )
    if cells < 2:
        return None
    first = body[0]
    headers = [n for n in range(first) if table.rows[n].header]
    shown = headers + [n for n in range(first, len(table.rows)) if touched[n]]
    rows = tuple(_row(text, table.rows[n], touched[n]) for n in shown)
    quoted = [table.rows[n] for n in shown if touched[n]]
    return QuotedTable(quoted[0].start, quoted[-1].end, rows)


def quoted_tables(
    text: str, tables: Sequence[SourceTable], start: int, end: int
) -> tuple[QuotedTable, ...]:
    """The tables of a document (`text`, its `tables` in text order) whose cells the
    span [start, end) crosses, each as the rows the span touches (a partly touched
    row whole) after the table's header rows (`quoted` False for those it does
    not reach). A table counts only when the span touches one of its body rows.

    A span inside one cell, only in header rows, or outside every table, gives ().
    O(number of tables + cells of the tables the span touches).
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


def chunk_rows(tables: Sequence[SourceTable], chunk: Chunk) -> list[tuple[int, int]]:
    """The body rows of `tables` (its document's) lying wholly in `chunk`, as spans
    of `chunk.text`, in order. O(number of rows)."""
    return [
        (lo - chunk.start, hi - chunk.start) for lo, hi in body_rows(tables, chunk.start, chunk.end)
    ]
