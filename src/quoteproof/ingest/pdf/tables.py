"""Finding ruled tables from the lines drawn on a page (pure geometry, no PDFium).

This is the "lines" strategy of pdfplumber's table finder, cut down to what ingest
needs, a table's bounding box and rulings: snap and join ruling edges, connect the
horizontal and vertical edges that cross, and call each connected group that forms
at least two cells a table. It runs on the edges PDFium reports (see `page`), in well
under a millisecond for a page, where pdfplumber needs 20-300 ms per page.
"""

from __future__ import annotations

from dataclasses import dataclass

Edge = tuple[float, float, float]
"""A ruling: (fixed coordinate, start, end); y, x0, x1 when horizontal; x, y0, y1 when vertical."""

TableBox = tuple[float, float, float, float]

SNAP_TOLERANCE = 3.0
"""Edges this close (points) on their fixed axis are one line; gaps this small are joined."""

MIN_CROSSINGS = 8
"""Fewest edge crossings a table has (three cells); one box has four."""

MIN_COLUMN_EDGES = 3
"""Fewest vertical edges a table has: two columns. A box split only by horizontal
rules is a call-out or a boxed list, not a table."""

_MAX_PAIRS = 250_000  # edge pairs tested per page at most (a hatched drawing is no table)


@dataclass(frozen=True)
class TableGrid:
    """A ruled table: its bounding box and the merged rulings that draw it.

    `wrapped` says that the rulings rule every row, so that several lines of text
    between two of them are one row whose cells wrap (`rules.rule_grid`); else they
    may as well be several rows, and such a table keeps no cells (`grid`)."""

    box: TableBox
    horizontal: tuple[Edge, ...]
    vertical: tuple[Edge, ...]
    wrapped: bool = False


def merge_edges(edges: list[Edge], tolerance: float = SNAP_TOLERANCE) -> list[Edge]:
    """Snap edges whose fixed coordinates lie within `tolerance` to one line and join
    those that overlap or nearly touch along it. O(n log n)."""
    merged: list[Edge] = []
    for fixed, start, end in sorted(edges):
        index = len(merged) - 1
        while index >= 0 and fixed - merged[index][0] <= tolerance:
            m_fixed, m_start, m_end = merged[index]
            if start <= m_end + tolerance and end >= m_start - tolerance:
                merged[index] = (m_fixed, min(m_start, start), max(m_end, end))
                break
            index -= 1
        else:
            merged.append((fixed, start, end))
    return merged


def _find(parent: list[int], item: int) -> int:
    while parent[item] != item:
        parent[item] = parent[parent[item]]
        item = parent[item]
    return item


def find_grids(horizontal: list[Edge], vertical: list[Edge]) -> tuple[TableGrid, ...]:
    """Return the ruled tables the edges draw, top to bottom, each with its rulings.

    A table is a connected group of crossing edges with at least two horizontal and
    `MIN_COLUMN_EDGES` vertical edges and at least `MIN_CROSSINGS` crossings.
    Tables whose boxes overlap are merged (boxes and rulings). O(h * v) after merging.
    """
    if len(horizontal) < 2 or len(vertical) < MIN_COLUMN_EDGES:
        return ()
    rows = merge_edges(horizontal)
    columns = merge_edges(vertical)
    if len(rows) < 2 or len(columns) < MIN_COLUMN_EDGES or len(rows) * len(columns) > _MAX_PAIRS:
        return ()
    tol = SNAP_TOLERANCE
    parent = list(range(len(rows) + len(columns)))
    crossings: list[int] = []
    for i, (y, x0, x1) in enumerate(rows):
        for j, (x, y0, y1) in enumerate(columns):
            if x0 - tol <= x <= x1 + tol and y0 - tol <= y <= y1 + tol:
                a, b = _find(parent, i), _find(parent, len(rows) + j)
                parent[a] = b
                crossings.append(i)
    groups: dict[int, list[int]] = {}
    for item in range(len(parent)):
        groups.setdefault(_find(parent, item), []).append(item)
    counts: dict[int, int] = {}
    for row in crossings:
        root = _find(parent, row)
        counts[root] = counts.get(root, 0) + 1
    grids: list[TableGrid] = []
    for root, members in groups.items():
        n_rows = sum(1 for m in members if m < len(rows))
        n_columns = len(members) - n_rows
        if n_rows < 2 or n_columns < MIN_COLUMN_EDGES or counts.get(root, 0) < MIN_CROSSINGS:
            continue
        grids.append(
            TableGrid(
                _group_box(members, rows, columns),
                tuple(rows[m] for m in members if m < len(rows)),
                tuple(columns[m - len(rows)] for m in members if m >= len(rows)),
            )
        )
    return tuple(sorted(_merge_grids(grids), key=lambda grid: (-grid.box[3], grid.box[0])))


def _group_box(members: list[int], rows: list[Edge], columns: list[Edge]) -> TableBox:
    xs: list[float] = []
    ys: list[float] = []
    for member in members:
        if member < len(rows):
            y, x0, x1 = rows[member]
            xs += (x0, x1)
            ys.append(y)
        else:
            x, y0, y1 = columns[member - len(rows)]
            ys += (y0, y1)
            xs.append(x)
    return (min(xs), min(ys), max(xs), max(ys))


def _merge_grids(grids: list[TableGrid]) -> list[TableGrid]:
    merged: list[TableGrid] = []
    for grid in grids:
        box = grid.box
        for index, other in enumerate(merged):
            ob = other.box
            if box[0] <= ob[2] and ob[0] <= box[2] and box[1] <= ob[3] and ob[1] <= box[3]:
                merged[index] = TableGrid(
                    (
                        min(box[0], ob[0]),
                        min(box[1], ob[1]),
                        max(box[2], ob[2]),
                        max(box[3], ob[3]),
                    ),
                    other.horizontal + grid.horizontal,
                    other.vertical + grid.vertical,
                )
                break
        else:
            merged.append(grid)
    return merged
