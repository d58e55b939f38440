"""A quote that crosses table cells, cut into text and tables for drawing.

The terminal, Markdown and HTML renderers draw a quote's tables (`Quote.tables`)
as tables: header rows (only where the source marks them) as column names, the
rows the quote touches below them. Every cell shown is a span of the source
document (`TableCell.text`); a header row drawn apart from the quote's own text
(the quote does not reach it, or it tops a later part of the table) is still the
source's own text, noted in the quote's caption (`table_notes`). The quote's
text before, between and after its tables, and source text that is no cell
between its rows (a section row, a footnote), is drawn as ordinary verbatim text.
"""

from __future__ import annotations

from dataclasses import dataclass

from quoteproof.model import Quote, QuotedRow, QuotedTable
from quoteproof.render.visible import normalise_breaks

__all__ = ["CARRIED_HEADER_NOTE", "WHOLE_ROWS_NOTE", "TableView", "quote_parts", "table_notes"]

CARRIED_HEADER_NOTE = "header row added from the table, not part of the quote"
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


def _span(row: QuotedRow) -> tuple[int, int]:
    return row.cells[0].start, row.cells[-1].end


def _slice(quote: Quote, lo: int, hi: int) -> str:
    """The quote's text between document offsets `lo` and `hi` (clipped to the quote)."""
    return quote.text[max(lo - quote.start, 0) : max(hi - quote.start, 0)]


def _table_parts(quote: Quote, table: QuotedTable) -> tuple[int, list[str | TableView], bool]:
    """Where `table`'s drawing starts in the document, its parts in order, and
    whether its header rows are drawn as column names apart from the quote's own
    text of them.

    The body rows are cut into table parts wherever source text that is no cell
    (a section row, a footnote) lies between two of them; that text is drawn
    between the parts, and every part has the header rows as column names. The
    header rows are drawn in place only when the quote takes them and nothing but
    row separators lies between them and the first body row; otherwise their
    text, if quoted, stays in the text before the table.
    """
    width = max(len(row.cells) for row in table.rows)
    texts = [
        tuple(normalise_breaks(cell.text) for cell in row.cells) + ("",) * (width - len(row.cells))
        for row in table.rows
    ]
    leading = _leading_headers(table)
    header, body = tuple(texts[:leading]), table.rows[leading:]
    first = _span(body[0])[0]
    in_place = bool(header) and all(row.quoted for row in table.rows[:leading])
    in_place = in_place and not _slice(quote, _span(table.rows[leading - 1])[1], first).strip()
    parts: list[str | TableView] = []
    shown: list[tuple[str, ...]] = []
    for number, row in enumerate(body):
        if number:
            gap = _slice(quote, _span(body[number - 1])[1], _span(row)[0]).strip()
            if gap:
                parts += [TableView(header, tuple(shown), width), normalise_breaks(gap)]
                shown = []
        shown.append(texts[leading + number])
    parts.append(TableView(header, tuple(shown), width))
    begins = _span(table.rows[0])[0] if in_place else first
    return begins, parts, bool(header) and (not in_place or len(parts) > 1)


def _parts(quote: Quote) -> tuple[tuple[str | TableView, ...], bool]:
    """`quote_parts`, and whether a table's header rows are drawn as column names
    apart from the quote's own text of them."""
    if not quote.tables:
        return (normalise_breaks(quote.text),), False
    parts: list[str | TableView] = []
    carried = False
    done = quote.start
    for table in quote.tables:
        begins, table_parts, apart = _table_parts(quote, table)
        before = _slice(quote, done, begins).strip()
        if before:
            parts.append(normalise_breaks(before))
        parts += table_parts
        carried = carried or apart
        done = max(done, table.end)
    after = _slice(quote, done, quote.end).strip()
    if after:
        parts.append(normalise_breaks(after))
    return tuple(parts), carried


def table_notes(quote: Quote) -> tuple[str, ...]:
    """What the quote's tables show beyond its own span: `CARRIED_HEADER_NOTE` when a
    table's header rows are drawn as column names apart from the quote's text (the
    quote leaves them out, or they top a part after the first), `WHOLE_ROWS_NOTE`
    when a row is only partly quoted; () for a quote without tables."""
    notes = []
    if _parts(quote)[1]:
        notes.append(CARRIED_HEADER_NOTE)
    if any(table.start < quote.start or table.end > quote.end for table in quote.tables):
        notes.append(WHOLE_ROWS_NOTE)
    return tuple(notes)


def quote_parts(quote: Quote) -> tuple[str | TableView, ...]:
    """The quote's text cut around its tables, in order: each table as one or more
    `TableView`s (cut where source text that is no cell lies between its rows), the
    text before, between and after them (slices of `quote.text`, line endings
    normalised, stripped; empty ones left out) as strings. A table without header
    rows has no column names (`TableView.header` empty).
    A quote without tables is one string, its whole text unstripped."""
    return _parts(quote)[0]
