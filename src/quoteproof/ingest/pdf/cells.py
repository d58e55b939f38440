"""Reading the cells of a page's regular ruled tables with PDFium (see `grid`).

Only the characters of lines inside a regular table are measured, one loose
character box each (one unchecked PDFium call per character); other pages and
lines cost nothing more. Boxes and rulings are turned to the page's display
orientation first, so rows run top to bottom and columns left to right as shown.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from dataclasses import dataclass

import pypdfium2 as pdfium  # type: ignore[import-untyped]
import pypdfium2.raw as pdfium_c  # type: ignore[import-untyped]

from quoteproof.ingest.pdf import calls as pdf_calls
from quoteproof.ingest.pdf.grid import CellRow, Point, assign_cells, regular_cells
from quoteproof.ingest.pdf.page import BBox, PdfLine, upright
from quoteproof.ingest.pdf.tables import Edge, TableGrid


@dataclass(frozen=True)
class TableCells:
    """A page's table with its cells: the page lines the cells were read from (those
    whose centre lies in the table) and the rows (`grid.assign_cells`), or
    None where the table keeps no cells."""

    lines: tuple[PdfLine, ...]
    rows: tuple[CellRow, ...] | None


def upright_grid(grid: TableGrid, rotation: int, page_box: BBox) -> TableGrid:
    """`grid` (PDF user space) in the page's display orientation (`page.upright`)."""
    horizontal: list[Edge] = []
    vertical: list[Edge] = []
    edges = [(x0, y, x1, y) for y, x0, x1 in grid.horizontal]
    edges += [(x, y0, x, y1) for x, y0, y1 in grid.vertical]
    for edge in edges:
        x0, y0, x1, y1 = upright(edge, rotation, page_box)
        if y1 - y0 <= x1 - x0:
            horizontal.append(((y0 + y1) / 2, x0, x1))
        else:
            vertical.append(((x0 + x1) / 2, y0, y1))
    box = upright(grid.box, rotation, page_box)
    return TableGrid(box, tuple(horizontal), tuple(vertical))


def _centre_in(line: PdfLine, box: BBox) -> bool:
    cx, cy = (line.x0 + line.x1) / 2, (line.y0 + line.y1) / 2
    return box[0] <= cx <= box[2] and box[1] <= cy <= box[3]


class _CharCentres:
    """Reads character centres of one text page, turned upright."""

    def __init__(self, textpage: pdfium.PdfTextPage, rotation: int, page_box: BBox) -> None:
        self.raw = pdf_calls.handle(textpage.raw)
        self.rect = pdfium_c.FS_RECTF()
        self.ref = ctypes.byref(self.rect)
        self.rotation = rotation
        self.page_box = page_box

    def of(self, line: PdfLine) -> list[Point | None]:
        """The centre of each character of `line` (None where PDFium gives no box)."""
        if line.char is None:
            return [None] * len(line.text)
        points: list[Point | None] = []
        rect, ref, raw = self.rect, self.ref, self.raw
        for index in range(line.char, line.char + len(line.text)):
            if not pdf_calls.loose_char_box(raw, index, ref):
                points.append(None)
                continue
            box = (rect.left, rect.bottom, rect.right, rect.top)
            x0, y0, x1, y1 = upright(box, self.rotation, self.page_box)
            points.append(((x0 + x1) / 2, (y0 + y1) / 2))
        return points


def read_cells(
    textpage: pdfium.PdfTextPage,
    lines: Sequence[PdfLine],
    grids: Sequence[TableGrid],
    rotation: int,
    page_box: BBox,
) -> tuple[TableCells, ...]:
    """The cells of each of the page's tables (`grids` and `lines` upright, `textpage`
    the page's open text page), in the order of `grids`."""
    found: list[TableCells] = []
    centres = _CharCentres(textpage, rotation, page_box)
    for grid in grids:
        inside = tuple(line for line in lines if _centre_in(line, grid.box))
        cells = regular_cells(grid)
        rows = None
        if cells is not None and inside:
            others = [line for line in lines if not _centre_in(line, grid.box)]
            rows = assign_cells(cells, inside, [centres.of(line) for line in inside], others)
        found.append(TableCells(inside, rows))
    return tuple(found)
