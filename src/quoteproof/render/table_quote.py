"""A quote that crosses table cells, cut into text and tables for drawing.

The terminal, Markdown and HTML renderers draw a quote's tables (`Quote.tables`)
as tables: header rows as column names, the rows the quote touches below them.
Every cell shown is a span of the source document (`TableCell.text`); a header row
the quote does not reach is still the source's own text, carried along and
noted in the quote's caption (`table_notes`). The quote's text before, between and after its
tables is drawn as ordinary verbatim text.
"""

from __future__ import annotations

from dataclasses import dataclass

from quoteproof.model import Quote, QuotedTable
from quoteproof.render.visible import normalise_breaks

__all__ = ["CARRIED_HEADER_NOTE", "WHOLE_ROWS_NOTE", "TableView", "quote_parts", "table_notes"]

CARRIED_HEADER_NOTE = "column names: the table's header row, from the source"
"""Said of a table whose header row the quote does not include."""
WHOLE_ROWS_NOTE = "rows the quote touches are shown whole"
"""Said of a table one of whose rows the quote takes only in part."""


@dataclass(frozen=True)
class TableView:
    """One quoted table as rows of cell texts (line endings normalised), each row
    padded with "" to `width` cells.

    `header` holds the header rows before the first body row (they name the
    columns), `body` the rest.
    """

    header: tuple[tuple[str, ...], ...]
    body: tuple[tuple[str, ...], ...]
    width: int


def _leading_headers(table: QuotedTable) -> int:
    """How many rows at the top of `table` are header rows, leaving one body row."""
    leading = 0
    while leading < len(table.rows) - 1 and table.rows[leading].header:
        leading += 1
    return leading


def _view(table: QuotedTable) -> TableView:
    width = max(len(row.cells) for row in table.rows)
    texts = [
        tuple(normalise_breaks(cell.text) for cell in row.cells) + ("",) * (width - len(row.cells))
        for row in table.rows
    ]
    leading = _leading_headers(table)
    return TableView(tuple(texts[:leading]), tuple(texts[leading:]), width)


def table_notes(quote: Quote) -> tuple[str, ...]:
    """What the quote's tables show beyond its own span: `CARRIED_HEADER_NOTE` when a
    header row is carried along, `WHOLE_ROWS_NOTE` when a row is only partly
    quoted; () for a quote without tables."""
    notes = []
    if any(not row.quoted for table in quote.tables for row in table.rows):
        notes.append(CARRIED_HEADER_NOTE)
    if any(table.start < quote.start or table.end > quote.end for table in quote.tables):
        notes.append(WHOLE_ROWS_NOTE)
    return tuple(notes)


def quote_parts(quote: Quote) -> tuple[str | TableView, ...]:
    """The quote's text cut around its tables, in order: each table as a
    `TableView`, the text before, between and after them (slices of `quote.text`,
    line endings normalised, stripped; empty ones left out) as strings.
    A quote without tables is one string, its whole text unstripped."""
    if not quote.tables:
        return (normalise_breaks(quote.text),)
    parts: list[str | TableView] = []
    done = 0
    for table in quote.tables:
        before = quote.text[done : max(done, table.start - quote.start)]
        if before.strip():
            parts.append(normalise_breaks(before.strip()))
        parts.append(_view(table))
        done = max(done, table.end - quote.start)
    after = quote.text[done:]
    if after.strip():
        parts.append(normalise_breaks(after.strip()))
    return tuple(parts)
