"""Tables ruled by horizontal lines only: their columns read from the text's gutters.

Many tables draw no column rulings: a rule above the header, one under it and one
under the last row ("booktabs"), often a thin rule under every row. `rule_stacks`
finds such stacks of horizontal rules (at least MIN_RULES of one width, crossed by
no vertical ruling and outside every ruled grid); `rule_grid` turns a stack into a
`TableGrid` whose column rulings are drawn where the text leaves a gutter, so that
the grid's cells (`grid.regular_cells`, `grid.assign_cells`) are read as those of a
fully ruled table:

- a gutter is an x range, at least GUTTER_EMS of the text's size wide, that no
  character of any line between the stack's first and last rule covers, with text
  on both sides;
- the rows are the bands between two rules; a band of several text lines is split
  into one row per line when every line fills the same two or more columns (a
  body of rows with no rule between them), and is one row whose cells wrap
  otherwise;
- a grid is a table only when its first row fills two cells or more and no row has
  two cells of more than MAX_CELL_LINES lines (`table_like`): a title block between
  rules, or a page's two columns of prose, is none.

A stack whose text leaves no gutter (a paragraph between two rules, a call-out)
gives no grid. Pure geometry: no PDFium.
"""

from __future__ import annotations

import bisect
import itertools
import statistics
from collections.abc import Sequence

from quoteproof.ingest.pdf.tables import SNAP_TOLERANCE, Edge, TableBox, TableGrid, merge_edges

MIN_RULES = 3
"""Fewest rules of one width that make a stack: above the header, under it, under
the last row."""

GUTTER_EMS = 0.8
"""Narrowest gutter between two columns, in ems of the text (a word space is about
0.25 em; a table's cell padding is an em or more)."""

WIDE_GAP = 1.5
"""How much wider than the median gap between a stack's rules a gap must be to cut the
stack there."""

MAX_CELL_LINES = 6
"""Most text lines in one cell of such a table: more, in two cells of a row, is prose
set in columns between rules (a newsletter's page), not a table."""

CharBox = tuple[float, float, float]
"""A character's left and right edges and its vertical centre (PDF points, the
page's display orientation, y growing upward)."""


def rule_stacks(
    horizontal: Sequence[Edge], vertical: Sequence[Edge], ruled: Sequence[TableBox]
) -> tuple[TableGrid, ...]:
    """The stacks of at least MIN_RULES horizontal rules of one extent (their ends
    within `SNAP_TOLERANCE`), top to bottom, that no vertical ruling crosses and
    that lie in none of the `ruled` tables' boxes, each as a grid with no vertical
    rulings (PDF user space: y grows upward)."""
    tol = SNAP_TOLERANCE
    free = [
        edge
        for edge in merge_edges(list(horizontal))
        if not any(
            b[0] - tol <= edge[1] and edge[2] <= b[2] + tol and b[1] - tol <= edge[0] <= b[3] + tol
            for b in ruled
        )
    ]
    groups: dict[tuple[float, float], list[Edge]] = {}
    for edge in free:
        key = next(
            (k for k in groups if abs(k[0] - edge[1]) <= tol and abs(k[1] - edge[2]) <= tol),
            (edge[1], edge[2]),
        )
        groups.setdefault(key, []).append(edge)
    stacks: list[TableGrid] = []
    for (x0, x1), edges in groups.items():
        if len(edges) < MIN_RULES:
            continue
        ys = sorted(y for y, _, _ in edges)
        box = (x0, ys[0], x1, ys[-1])
        crossed = any(
            x0 + tol < x < x1 - tol and low < box[3] - tol and high > box[1] + tol
            for x, low, high in vertical
        )
        if not crossed:
            stacks.append(TableGrid(box, tuple(edges), ()))
    return tuple(sorted(stacks, key=lambda grid: (-grid.box[3], grid.box[0])))


def _stack(whole: TableGrid, rules: Sequence[Edge]) -> TableGrid:
    """The part of the stack `whole` that `rules` (some of its rules, bottom to top)
    make: as wide as `whole`, from its first rule to its last."""
    x0, _, x1, _ = whole.box
    return TableGrid((x0, rules[0][0], x1, rules[-1][0]), tuple(rules), ())


def split_stack(stack: TableGrid) -> list[TableGrid]:
    """`stack` cut at its widest gap between two rules, when that gap is more than
    WIDE_GAP times the median gap: the parts with at least MIN_RULES rules (a page's
    header and footer rules share a table's width; the text between them and the
    table is no table); none when the rules are about evenly spaced."""
    rules = sorted(stack.horizontal)
    if len(rules) <= MIN_RULES:
        return []
    gaps = [rules[i][0] - rules[i - 1][0] for i in range(1, len(rules))]
    cut = 1 + max(range(len(gaps)), key=gaps.__getitem__)
    if gaps[cut - 1] <= WIDE_GAP * statistics.median(gaps):
        return []  # evenly spaced rules (a lined form): no part stands apart
    return [_stack(stack, part) for part in (rules[:cut], rules[cut:]) if len(part) >= MIN_RULES]


def trimmed(stack: TableGrid) -> list[TableGrid]:
    """`stack` without its bottom rule, and without its top rule (a rule over a
    paragraph above the table, the rule under a page's running header, may share
    the table's width): two stacks in that order; none when it has MIN_RULES rules
    or fewer."""
    rules = sorted(stack.horizontal)
    if len(rules) <= MIN_RULES:
        return []
    return [_stack(stack, part) for part in (rules[1:], rules[:-1])]


def _gutters(boxes: Sequence[CharBox], left: float, right: float, width: float) -> list[float]:
    """The middles of the x ranges at least `width` wide between `left` and `right`
    that no character box covers, with characters on both sides."""
    spans = sorted((x0, x1) for x0, x1, _ in boxes if x1 > left and x0 < right)
    middles: list[float] = []
    reach = None
    for x0, x1 in spans:
        if reach is not None and x0 - reach >= width:
            middles.append((reach + x0) / 2)
        reach = x1 if reach is None else max(reach, x1)
    return middles


def _heights(boxes: Sequence[CharBox], size: float) -> list[list[CharBox]]:
    """`boxes` grouped into text lines by their vertical centres (within half of
    `size`), top to bottom."""
    lines: list[list[CharBox]] = []
    for box in sorted(boxes, key=lambda b: -b[2]):
        if lines and lines[-1][-1][2] - box[2] <= size / 2:
            lines[-1].append(box)
        else:
            lines.append([box])
    return lines


def _filled(line: Sequence[CharBox], columns: Sequence[float]) -> frozenset[int]:
    """The columns (indexes into the intervals of `columns`) that `line` has text in."""
    return frozenset(
        bisect.bisect_right(columns, (x0 + x1) / 2, 1, len(columns) - 1) - 1 for x0, x1, _ in line
    )


def _row_splits(band: Sequence[CharBox], columns: Sequence[float], size: float) -> list[float]:
    """Where a band's text lines part into rows (the heights between two lines):
    between every two lines when each fills every column the band has text in, and
    two columns at least (rows with no rule between them: "Amoxicillin | 500 mg |
    Oral" over "Ceftriaxone | 1 g | IV"); none otherwise (one row whose cells wrap:
    "Occlusion | High | Line pressure ..." over "downstream | | limit")."""
    lines = _heights(band, size)
    if len(lines) < 2:
        return []
    filled = [_filled(line, columns) for line in lines]
    if len(filled[0]) < 2 or any(cells != filled[0] for cells in filled):
        return []
    return [(a[-1][2] + b[0][2]) / 2 for a, b in itertools.pairwise(lines)]


def rule_grid(stack: TableGrid, boxes: Sequence[CharBox], size: float) -> TableGrid | None:
    """The grid of the table that `stack` rules, with column rulings drawn in the
    gutters of the character `boxes` inside it and row rulings where a band parts
    into rows (see the module docstring), for text of `size` points; None when the
    text leaves no gutter."""
    x0, bottom, x1, top = stack.box
    tol = SNAP_TOLERANCE
    inside = [b for b in boxes if bottom < b[2] < top and x0 - tol <= b[0] and b[1] <= x1 + tol]
    gutters = _gutters(inside, x0, x1, GUTTER_EMS * size)
    if not gutters:
        return None
    columns = [x0, *gutters, x1]
    rules = sorted(y for y, _, _ in stack.horizontal)
    splits: list[float] = []
    for lower, upper in itertools.pairwise(rules):
        splits += _row_splits([b for b in inside if lower < b[2] < upper], columns, size)
    horizontal = tuple(stack.horizontal) + tuple((y, x0, x1) for y in splits)
    vertical = tuple((x, bottom, top) for x in gutters)
    return TableGrid(stack.box, horizontal, vertical, wrapped=True)


def table_like(rows: Sequence[Sequence[Sequence[object]]]) -> bool:
    """Whether a grid's rows (each a sequence of cells, each the cell's text lines)
    read as a table: the first row fills two cells or more, and no row has two cells
    of more than MAX_CELL_LINES lines."""
    if not rows or sum(bool(cell) for cell in rows[0]) < 2:
        return False
    return all(sum(len(cell) > MAX_CELL_LINES for cell in row) < 2 for row in rows)
