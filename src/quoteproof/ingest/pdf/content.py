"""What the reading of one PDF page yields for the stages after it (headings,
block structure, text): its box, lines, tables and their cells."""

from __future__ import annotations

from dataclasses import dataclass

from quoteproof.ingest.pdf.cells import TableCells
from quoteproof.ingest.pdf.page import BBox, PdfLine


@dataclass(frozen=True)
class PageContent:
    """What one page holds: its box, text lines, ruled-table boxes and images
    (boxes in the page's display orientation, see `page.upright`), and the cells of
    its tables (`cells[n]` of `tables[n]`, where read)."""

    number: int
    bbox: BBox
    lines: tuple[PdfLine, ...]
    tables: tuple[BBox, ...] = ()
    has_image: bool = False
    cells: tuple[TableCells, ...] = ()
