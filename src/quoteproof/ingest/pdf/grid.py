"""The cells of a ruled PDF table: which characters lie in which cell (pure geometry).

A table found from its rulings (`tables.TableGrid`) is *regular* when its
rulings cut it into rows and columns with no spanning cell: every boundary between
two rows is ruled across every column, and every boundary between two columns is
ruled down every row. One exception: a row ruled as one cell across the whole
table (a title, a row of notes, or a section label such as a system organ class
above its rows) is kept as a spanning row, text of the table but no table row.
The outer frame need not be drawn.

Each character of the table's lines is put in the cell its box's centre lies in;
whitespace and control characters belong to no cell (they only join characters of
one cell). A table keeps no cells when a character lies outside the grid, when a
ruling cuts through a word, when a column is empty, when a line outside the table
reaches into it, or when a row's first cell holds several
lines and so does another cell of the row at the same heights (several rows of
text between two rulings, or cells wrapped alike: the two cannot be told apart),
unless the grid rules every row (`Cells.wrapped`) or, in a table of short cells, the
first cell is a short name whose later lines start in lower case (`_wraps`) or every
cell of the row set on several lines fills its column before each break
(`_row_wraps`: wrapped by width).
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, replace

from quoteproof.ingest.pdf.page import PdfLine
from quoteproof.ingest.pdf.tables import SNAP_TOLERANCE, Edge, TableGrid

NAME_WORDS = 5
"""Most words of a row's first cell that may wrap as one name ("Fresh frozen plasma")."""
CELL_WORDS = 20
"""Most words of any cell of a table whose first cells may wrap as names (a table of
paragraphs, a checklist of sentences or a guideline's remarks, is left as it was)."""

Point = tuple[float, float]


@dataclass(frozen=True)
class CellRow:
    """One row of a table's cells, each cell the pieces of lines it holds, in order
    (a piece is a `PdfLine` cut to the cell's characters, its own `char` index).

    `spanning` marks a row ruled as one cell across the table (a title or notes):
    its one cell is text of the table block, not a table row.
    """

    cells: tuple[tuple[PdfLine, ...], ...]
    spanning: bool = False
    columns: tuple[float, ...] = ()
    """The bounds of its table's columns, left to right (PDF points, display
    orientation): where the column rulings stand."""


@dataclass(frozen=True)
class Cells:
    """The grid of a regular table: column bounds left to right, row bounds top to
    bottom (PDF points, display orientation), per row whether it is a spanning
    row, and whether a row's cells may wrap (`TableGrid.wrapped`)."""

    columns: tuple[float, ...]
    rows: tuple[float, ...]
    spanning: tuple[bool, ...]
    wrapped: bool = False


def _positions(values: Sequence[float]) -> tuple[float, ...]:
    """`values` sorted, those within `SNAP_TOLERANCE` of the previous kept one dropped."""
    kept: list[float] = []
    for value in sorted(values):
        if not kept or value - kept[-1] > SNAP_TOLERANCE:
            kept.append(value)
    return tuple(kept)


def _ruled(edges: Sequence[Edge], at: float, low: float, high: float) -> bool:
    """Whether one of `edges` lies at `at` and covers [low, high] (within tolerance)."""
    tol = SNAP_TOLERANCE
    return any(
        abs(fixed - at) <= tol and start <= low + tol and end >= high - tol
        for fixed, start, end in edges
    )


def regular_cells(grid: TableGrid) -> Cells | None:
    """The rows and columns of `grid`, or None when it is not regular (see the module
    docstring) or has fewer than two columns or two table rows.

    The columns are those ruled down most of the table's rows; a row ruled down none
    of them is a spanning row (its own divisions, a footnote mark's box say, do
    not count).
    """
    x0, y0, x1, y1 = grid.box
    inner = [x for x, _, _ in grid.vertical if x0 + SNAP_TOLERANCE < x < x1 - SNAP_TOLERANCE]
    positions = _positions(inner)
    rows = tuple(reversed(_positions([y for y, _, _ in grid.horizontal] + [y0, y1])))
    if len(rows) < 3:
        return None
    ruled = [
        frozenset(x for x in positions if _ruled(grid.vertical, x, bottom, top))
        for top, bottom in itertools.pairwise(rows)
    ]
    body = max(ruled, key=lambda found: (sum(found == other for other in ruled), len(found)))
    if not body:
        return None
    spanning = tuple(not (found & body) for found in ruled)
    kept = [found for found, span in zip(ruled, spanning, strict=True) if not span]
    if len(kept) < 2 or any(found != body for found in kept):
        return None  # a cell spans some columns
    columns = _positions([x0, x1, *body])
    for y in rows[1:-1]:
        if not all(_ruled(grid.horizontal, y, a, b) for a, b in itertools.pairwise(columns)):
            return None  # a cell spans two rows
    return Cells(columns, rows, spanning, grid.wrapped)


def _index(bounds: Sequence[float], value: float) -> int | None:
    """The interval of the ascending `bounds` that strictly contains `value` (a value
    on an inner bound goes to the later interval); within `SNAP_TOLERANCE` outside
    the outer bounds, the first or last interval; None further out. O(log len(bounds))."""
    if not bounds[0] - SNAP_TOLERANCE <= value <= bounds[-1] + SNAP_TOLERANCE:
        return None
    return bisect.bisect_right(bounds, value, 1, len(bounds) - 1) - 1


def _neutral(char: str) -> bool:
    """Whitespace and control characters (PDFium's hyphen mark too) join cells' text
    but belong to no cell."""
    return char.isspace() or not char.isprintable() or char in "\ufffe\uffff"


Cell = tuple[int, int]
"""A cell's (row, column); a spanning row's one cell is column 0."""


def _pieces(placed: Sequence[Cell | None]) -> list[tuple[Cell, int, int]]:
    """A line cut into maximal pieces (cell, start, end) of characters of one cell,
    given each character's cell (`placed`, None for a neutral one); neutral
    characters between two characters of one cell stay in their piece."""
    pieces: list[tuple[Cell, int, int]] = []
    open_cell: Cell | None = None
    start = last = 0
    for offset, cell in enumerate(placed):
        if cell is None:
            continue
        if cell != open_cell:
            if open_cell is not None:
                pieces.append((open_cell, start, last + 1))
            open_cell, start = cell, offset
        last = offset
    if open_cell is not None:
        pieces.append((open_cell, start, last + 1))
    return pieces


def assign_cells(
    cells: Cells,
    lines: Sequence[PdfLine],
    centres: Sequence[Sequence[Point | None]],
    others: Sequence[PdfLine] = (),
) -> tuple[CellRow, ...] | None:
    """Put the characters of the table's `lines` in the cells of `cells`.

    `centres[i][k]` is the centre of character k of `lines[i]` (None where PDFium
    gives no box). `others` are the page's lines outside the table. Returns the
    rows top to bottom, each cell's pieces in line order, or None when the table
    keeps no cells (see the module docstring). O(characters x columns).
    """
    n_columns = len(cells.columns) - 1
    n_rows = len(cells.rows) - 1
    if any(_reaches_into(line, cells) for line in others):
        return None
    found: dict[Cell, list[PdfLine]] = {}
    heights = [-y for y in cells.rows]  # ascending, as `_index` needs (rows run down)
    for line, points in zip(lines, centres, strict=True):
        placed: list[Cell | None] = []
        for char, point in zip(line.text, points, strict=True):
            if _neutral(char):
                placed.append(None)
                continue
            if point is None:
                return None
            row = _index(heights, -point[1])
            column = _index(cells.columns, point[0])
            if row is None or column is None:
                return None
            cell = (row, 0 if cells.spanning[row] else column)
            if placed and placed[-1] is not None and placed[-1] != cell:
                return None  # a ruling through a word: the rulings are no cell borders
            placed.append(cell)
        for cell, start, end in _pieces(placed):
            index = None if line.char is None else line.char + start
            found.setdefault(cell, []).append(replace(line, char=index, text=line.text[start:end]))
    return _rows(cells, found, n_rows, n_columns)


def _reaches_into(line: PdfLine, cells: Cells) -> bool:
    """Whether a line outside the table overlaps the grid by more than the tolerance."""
    tol = SNAP_TOLERANCE
    left, right = cells.columns[0] + tol, cells.columns[-1] - tol
    top, bottom = cells.rows[0] - tol, cells.rows[-1] + tol
    return line.x0 < right and line.x1 > left and line.y0 < top and line.y1 > bottom


def _rows(
    cells: Cells, found: dict[Cell, list[PdfLine]], n_rows: int, n_columns: int
) -> tuple[CellRow, ...] | None:
    rows: list[CellRow] = []
    for row in range(n_rows):
        spanning = cells.spanning[row]
        width = 1 if spanning else n_columns
        row_cells = tuple(tuple(found.get((row, column), ())) for column in range(width))
        rows.append(CellRow(row_cells, spanning, cells.columns))
    short = all(_words(cell) <= CELL_WORDS for cell_row in rows for cell in cell_row.cells)
    for cell_row in rows:
        if cell_row.spanning or cells.wrapped:
            continue
        if _stacked(cell_row.cells, cells.columns, names_wrap=short):
            return None
    for column in range(n_columns):
        if not any((row, column) in found for row in range(n_rows) if not cells.spanning[row]):
            return None  # an empty column: a shading box's sides, not column rulings
    return tuple(rows)


def _words(cell: Sequence[PdfLine]) -> int:
    """How many words the pieces of `cell` hold."""
    return sum(len(piece.text.split()) for piece in cell)


def _wraps(cell: Sequence[PdfLine]) -> bool:
    """Whether `cell` holds a name of at most NAME_WORDS words whose every piece below
    its top line starts with a lower-case letter (one name carried onto the next line:
    "Fresh frozen" / "plasma")."""
    top = max(piece.y1 for piece in cell)
    below = [piece.text.lstrip() for piece in cell if piece.y1 < top - SNAP_TOLERANCE]
    return bool(below) and _words(cell) <= NAME_WORDS and all(text[:1].islower() for text in below)


WRAP_MARGIN = 10.0
"""Points left of a column's right ruling within which a wrapped line ends: its cell's
padding and a space (a line ends where the next word would not fit)."""


def _fills(cell: Sequence[PdfLine], right: float) -> bool:
    """Whether every line of `cell` but its last ends where the first word of the next
    line would not have fitted before the column's right ruling `right` (less
    WRAP_MARGIN): text wrapped by width, not lines set one under another ("1 or 2
    tablets" / "1 tablet" is two rows)."""
    heights = _heights(cell)
    lines = [
        sorted(
            (p for p in cell if abs((p.y0 + p.y1) / 2 - h) <= SNAP_TOLERANCE), key=lambda p: p.x0
        )
        for h in sorted(heights, reverse=True)
    ]
    for above, below in itertools.pairwise(lines):
        text = below[0].text.strip()
        if not above or not text:
            return False
        word = text.split()[0]
        word_width = (below[0].x1 - below[0].x0) * len(word) / len(text)
        if max(p.x1 for p in above) + word_width < right - WRAP_MARGIN:
            return False
    return True


def _row_wraps(cells: Sequence[Sequence[PdfLine]], columns: Sequence[float]) -> bool:
    """Whether the row's cells wrap by width: every cell set on several lines fills
    its column to the right ruling before each break (`_fills`: "Treating a new DVT or
    pulmonary" / "embolism" beside "10 mg twice a day for the first 7" / "days, then 5
    mg twice a day"), where rows stacked between two rulings end short ("paracetamol
    500 mg tablets" / "ibuprofen 200 mg tablets" beside "1 or 2 tablets" / "1
    tablet")."""
    bounds = zip(cells, columns[1:], strict=True)
    stacked = [(cell, right) for cell, right in bounds if len(_heights(cell)) > 1]
    return bool(stacked) and all(_fills(cell, right) for cell, right in stacked)


def _heights(cell: Sequence[PdfLine]) -> tuple[float, ...]:
    """The distinct heights (line centres, within tolerance) of a cell's pieces."""
    return _positions([(piece.y0 + piece.y1) / 2 for piece in cell])


def _stacked(
    cells: Sequence[Sequence[PdfLine]], columns: Sequence[float], *, names_wrap: bool = False
) -> bool:
    """Whether the row's first cell holds lines at two or more heights that another
    cell of the row holds lines at too (rows of text between two rulings, or cells
    wrapped alike; a header whose column names wrap alike is fine), unless
    `names_wrap` (every cell of the table is short: a table of data, not of
    paragraphs) and the first cell is a name that wraps (`_wraps`: "Fresh frozen" /
    "plasma") or the row's cells wrap by width (`_row_wraps`, `columns` the column
    rulings), where the rows of a column start anew ("Red cells" / "Platelets")."""
    tol = SNAP_TOLERANCE
    first = _heights(cells[0])
    if len(first) < 2 or (names_wrap and (_wraps(cells[0]) or _row_wraps(cells, columns))):
        return False
    for cell in cells[1:]:
        if sum(any(abs(a - b) <= tol for b in _heights(cell)) for a in first) > 1:
            return True
    return False
