"""Reading the cells of a page's regular ruled tables with PDFium (see `grid`).

Only the characters of lines inside a regular table are measured, one loose
character box each (one unchecked PDFium call per character); other pages and
lines cost nothing more. Boxes and rulings are turned to the page's display
orientation first, so rows run top to bottom and columns left to right as shown.
"""

from __future__ import annotations

import ctypes
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

import pypdfium2 as pdfium  # type: ignore[import-untyped]
import pypdfium2.raw as pdfium_c  # type: ignore[import-untyped]

from quoteproof.ingest.pdf import calls as pdf_calls
from quoteproof.ingest.pdf.grid import CellRow, Point, assign_cells, regular_cells
from quoteproof.ingest.pdf.page import BBox, PdfLine, upright
from quoteproof.ingest.pdf.rules import CharBox, rule_grid, split_stack, table_like, trimmed
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
    return TableGrid(box, tuple(horizontal), tuple(vertical), grid.wrapped)


def _centre_in(line: PdfLine, box: BBox) -> bool:
    cx, cy = (line.x0 + line.x1) / 2, (line.y0 + line.y1) / 2
    return box[0] <= cx <= box[2] and box[1] <= cy <= box[3]


class _CharCentres:
    """Reads character boxes of one text page, turned upright."""

    def __init__(self, textpage: pdfium.PdfTextPage, rotation: int, page_box: BBox) -> None:
        self.raw = pdf_calls.handle(textpage.raw)
        self.rect = pdfium_c.FS_RECTF()
        self.ref = ctypes.byref(self.rect)
        self.rotation = rotation
        self.page_box = page_box

    def _upright_boxes(self, line: PdfLine) -> list[BBox | None]:
        """The upright loose box of each character of `line` (None where PDFium gives
        none; all None for a line read by OCR)."""
        if line.char is None:
            return [None] * len(line.text)
        found: list[BBox | None] = []
        rect, ref, raw = self.rect, self.ref, self.raw
        for index in range(line.char, line.char + len(line.text)):
            if not pdf_calls.loose_char_box(raw, index, ref):
                found.append(None)
                continue
            box = (rect.left, rect.bottom, rect.right, rect.top)
            found.append(upright(box, self.rotation, self.page_box))
        return found

    def boxes(self, line: PdfLine) -> list[CharBox]:
        """The left and right edges and the vertical centre of each character of
        `line` that PDFium gives a box for, but spaces."""
        return [
            (box[0], box[2], (box[1] + box[3]) / 2)
            for char, box in zip(line.text, self._upright_boxes(line), strict=True)
            if box is not None and not char.isspace()
        ]

    def of(self, line: PdfLine) -> list[Point | None]:
        """The centre of each character of `line` (None where PDFium gives no box)."""
        return [
            None if box is None else ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
            for box in self._upright_boxes(line)
        ]


MAX_TRIMMED_RULES = 12
"""Most rules of a stack that is tried again without an end rule when it rules no
table (each try reads the stack's text again)."""


def rule_tables(
    textpage: pdfium.PdfTextPage,
    lines: Sequence[PdfLine],
    stacks: Sequence[TableGrid],
    rotation: int,
    page_box: BBox,
) -> tuple[TableGrid, ...]:
    """The grids of the tables that `stacks` of horizontal rules rule (`rules.rule_grid`;
    `stacks` and `lines` upright, `textpage` the page's open text page): those whose
    every character falls in a cell (`grid.assign_cells`) and whose rows read as a
    table (`rules.table_like`). A stack that rules none is tried again cut at a wide
    gap (`rules.split_stack`), or else, when short, without an end rule
    (`rules.trimmed`); a table is trimmed of an end rule while that draws more
    columns, or drops a last row of one cell (a note under the table)."""
    chars = _CharCentres(textpage, rotation, page_box)
    boxes: dict[int, list[CharBox]] = {}  # each line's character boxes, read once

    def table_of(stack: TableGrid) -> tuple[TableGrid, int] | None:
        """The grid `stack` rules and how many cells its last row fills; None when it
        rules no table."""
        inside = [(n, line) for n, line in enumerate(lines) if _centre_in(line, stack.box)]
        if not inside:
            return None
        for n, line in inside:
            if n not in boxes:
                boxes[n] = chars.boxes(line)
        size = statistics.median(line.size for _, line in inside)
        grid = rule_grid(stack, [box for n, _ in inside for box in boxes[n]], size)
        cells = None if grid is None else regular_cells(grid)
        if grid is None or cells is None:
            return None
        others = [line for line in lines if not _centre_in(line, stack.box)]
        texts = [line for _, line in inside]
        rows = assign_cells(cells, texts, [chars.of(line) for line in texts], others)
        body = [row.cells for row in rows or () if not row.spanning]
        if rows is None or not table_like(body):
            return None
        return grid, sum(bool(cell) for cell in body[-1])

    found: list[TableGrid] = []
    pending = list(stacks)
    tried: set[tuple[Edge, ...]] = set()
    while pending:
        stack = pending.pop(0)
        if stack.horizontal in tried:
            continue
        tried.add(stack.horizontal)
        table = table_of(stack)
        if table is None:
            parts = split_stack(stack)
            if not parts and len(stack.horizontal) <= MAX_TRIMMED_RULES:
                parts = trimmed(stack)  # a paragraph's or a header's rule at an end
            pending[:0] = parts
            continue
        while better := [  # an end band that cut columns, or a note under the table
            (part, other)
            for k, part in enumerate(trimmed(stack))
            if (other := table_of(part)) is not None
            and (
                len(other[0].vertical) > len(table[0].vertical)
                or (k == 0 and table[1] == 1 and len(other[0].vertical) == len(table[0].vertical))
            )
        ]:
            stack, table = better[0]
        found.append(table[0])
    return tuple(found)


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
