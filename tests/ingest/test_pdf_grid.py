"""Which cell of a regular ruled table each character of a PDF line lies in."""

from __future__ import annotations

from quoteproof.ingest.pdf.grid import Cells, Point, assign_cells
from quoteproof.ingest.pdf.page import PdfLine

CELLS = Cells(columns=(0.0, 50.0, 100.0), rows=(100.0, 80.0, 60.0), spanning=(False, False))


def line(text: str, xs: list[float | None], y: float) -> tuple[PdfLine, list[Point | None]]:
    """A line of `text` at height `y`, character k centred at `xs[k]` (None: a space)."""
    placed = [x for x in xs if x is not None]
    box = PdfLine(1, 0, text, min(placed) - 2, y - 4, max(placed) + 2, y + 4)
    return box, [None if x is None else (x, y) for x in xs]


def cell_texts(lines: list[tuple[PdfLine, list[Point | None]]]) -> list[list[str]]:
    rows = assign_cells(CELLS, [found for found, _ in lines], [points for _, points in lines])
    assert rows is not None
    return [[" ".join(piece.text for piece in cell) for cell in row.cells] for row in rows]


def test_a_character_just_past_a_column_ruling_lies_in_the_next_cell() -> None:
    rows = [
        line("Age 5", [10, 14, 18, None, 51.5], 90),
        line("Dose 70", [10, 14, 18, 22, None, 60, 64], 70),
    ]
    assert cell_texts(rows) == [["Age", "5"], ["Dose", "70"]]


def test_a_character_just_past_a_row_ruling_lies_in_the_next_row() -> None:
    rows = [
        line("Age 5", [10, 14, 18, None, 60], 81.5),
        line("Dose 7", [10, 14, 18, 22, None, 60], 78.5),
    ]
    assert cell_texts(rows) == [["Age", "5"], ["Dose", "7"]]


def test_the_tolerance_holds_only_outside_the_outer_rulings() -> None:
    rows = [
        line("Age 5", [-2, 2, 6, None, 101.5], 90),
        line("Dose 7", [10, 14, 18, 22, None, 60], 70),
    ]
    assert cell_texts(rows) == [["Age", "5"], ["Dose", "7"]]
    far = [line("Age 5", [-5, 2, 6, None, 60], 90), line("Dose 7", [10, 14, 18, 22, None, 60], 70)]
    assert assign_cells(CELLS, [found for found, _ in far], [points for _, points in far]) is None
