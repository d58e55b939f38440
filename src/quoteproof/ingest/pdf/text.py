"""Building a PDF's canonical text from planned blocks, with the map back to PDFium.

A cleaned line is a list of pieces `(text, char)`: `text` is either PDFium's own
characters from index `char` on (unchanged), or a generated string (`char` None).
`CanonicalText` appends pieces and records the `CharRun`s of the real ones.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from quoteproof.ingest.blocks import CELL_SEPARATOR, Span, row_line
from quoteproof.ingest.pdf.grid import CellRow
from quoteproof.ingest.pdf.page import HYPHEN_MARKS, PdfLine
from quoteproof.model import CharRun, TableRow

Piece = tuple[str, int | None]
"""Canonical text and the PDFium index of its first character (None: generated)."""

SOFT_HYPHENS = ("\u00ad",)
"""Characters dropped at a line end, the two lines joined without a space."""

TABLE_ROW_SEPARATOR = "\n"
"""What joins the lines of a table block."""

_SOLID = re.compile(r"[^\s\x00-\x1f\x7f\ud800-\udfff\ufffe\uffff]+")
_WORD = re.compile(r"\w+")
_WORD_END = re.compile(r"([^\W\d_]+)$")
_WORD_START = re.compile(r"[^\W\d_]+")


class WordSet:
    """The lower-cased words of a document, gathered on first use (most documents
    never ask, which saves a pass over the text)."""

    def __init__(self, texts: Callable[[], Iterable[str]]) -> None:
        self._texts = texts
        self._words: set[str] | None = None

    def __contains__(self, word: object) -> bool:
        if self._words is None:
            self._words = set(_WORD.findall(" ".join(self._texts()).lower()))
        return word in self._words


def keep_hyphen(before: str, after: str, words: WordSet) -> bool:
    """Whether a hyphen ending a line between `before` and `after` stays in the text.

    It is dropped only between lowercase letters when the joined word occurs in the
    document unhyphenated ("infec-" + "tion" and "infection" elsewhere).
    """
    head = _WORD_END.search(before)
    tail = _WORD_START.match(after)
    if head is None or tail is None or not (before[-1].islower() and after[0].islower()):
        return True
    return (head.group(1) + tail.group(0)).lower() not in words


def clean_line(line: PdfLine, words: WordSet) -> tuple[str, list[Piece]]:
    """Return a line's canonical text and pieces.

    Whitespace runs become one space and the ends are stripped; control characters,
    lone surrogates and U+FFFE/U+FFFF are dropped, except a PDFium hyphen mark
    between a letter and a letter or digit, which becomes a generated "-" or, per
    `keep_hyphen`, nothing.
    A single space character keeps its PDFium index; other whitespace runs become
    a generated space.
    """
    text, char = line.text, line.char
    stripped = text.strip()
    if stripped.isprintable() and "  " not in stripped:  # the common case, one piece
        lead = text.find(stripped[0]) if stripped else 0
        return stripped, [(stripped, None if char is None else char + lead)]
    pieces: list[Piece] = []
    previous_end: int | None = None
    for match in _SOLID.finditer(text):
        start, end = match.span()
        if previous_end is not None:
            gap = text[previous_end:start]
            if gap == " ":
                pieces.append((" ", None if char is None else char + previous_end))
            elif any(g.isspace() for g in gap):
                pieces.append((" ", None))
            elif (
                any(mark in gap for mark in HYPHEN_MARKS)
                and _hyphen_context(text, previous_end, start)
                and keep_hyphen(text[:previous_end], text[start:], words)
            ):
                pieces.append(("-", None))
        pieces.append((match.group(), None if char is None else char + start))
        previous_end = end
    return "".join([piece for piece, _ in pieces]), pieces


def _hyphen_context(text: str, gap_start: int, gap_end: int) -> bool:
    return text[gap_start - 1].isalpha() and text[gap_end].isalnum()


def join_lines(
    lines: Sequence[tuple[str, list[Piece]]], words: WordSet, separator: str = " "
) -> list[Piece]:
    """Join cleaned lines into one block's pieces.

    With the space separator (paragraphs, list items, headings): a soft hyphen ending
    a line is dropped and the lines joined directly; a "-" ending a line after a
    lowercase letter, before a lowercase letter, is kept or dropped per
    `keep_hyphen` and the lines joined directly; other lines are joined by a
    generated space. Other separators ("\\n" in tables) join every line as is.
    """
    out: list[Piece] = []
    previous = ""
    for text, pieces in lines:
        if not text:
            continue
        if out:
            out.extend(_junction(out, previous, text, words, separator))
        out.extend(pieces)
        previous = text
    return out


def _junction(
    out: list[Piece], before: str, after: str, words: WordSet, separator: str
) -> list[Piece]:
    """The pieces between two joined lines; may shorten `out`'s last piece."""
    if separator != " ":
        return [(separator, None)]
    if before.endswith(SOFT_HYPHENS):
        _drop_last_char(out)
        return []
    if before.endswith("-") and len(before) >= 2 and before[-2].islower() and after[0].islower():
        if not keep_hyphen(before[:-1], after, words):
            _drop_last_char(out)
        return []
    return [(" ", None)]


def _drop_last_char(pieces: list[Piece]) -> None:
    text, char = pieces[-1]
    if len(text) > 1:
        pieces[-1] = (text[:-1], char)
    else:
        pieces.pop()


class CanonicalText:
    """Accumulates canonical text and the `CharRun`s of its real PDFium characters.

    Consecutive pieces that continue the same page's character sequence share one run.
    """

    def __init__(self) -> None:
        self._parts: list[str] = []
        self.length = 0
        self._runs: list[list[int]] = []  # [start, page, char, length]

    def append(self, text: str, page: int, char: int | None) -> None:
        """Append `text`; `char` is the PDFium index of its first character, or None."""
        if not text:
            return
        if char is not None:
            last = self._runs[-1] if self._runs else None
            if (
                last is not None
                and last[1] == page
                and last[0] + last[3] == self.length
                and last[2] + last[3] == char
            ):
                last[3] += len(text)
            else:
                self._runs.append([self.length, page, char, len(text)])
        self._parts.append(text)
        self.length += len(text)

    def extend(self, pieces: Iterable[Piece], page: int) -> None:
        """Append each piece of `pieces`, all from page `page` (`append`, inlined)."""
        runs, parts, length = self._runs, self._parts, self.length
        last = runs[-1] if runs else None
        for text, char in pieces:
            if char is not None:
                if (
                    last is not None
                    and last[1] == page
                    and last[0] + last[3] == length
                    and last[2] + last[3] == char
                ):
                    last[3] += len(text)
                else:
                    last = [length, page, char, len(text)]
                    runs.append(last)
            parts.append(text)
            length += len(text)
        self.length = length

    def text(self) -> str:
        """The canonical text so far."""
        return "".join(self._parts)

    def text_from(self, start: int) -> str:
        """The canonical text from offset `start` on (cost: the parts after `start`)."""
        tail: list[str] = []
        length = self.length
        for part in reversed(self._parts):
            if length <= start:
                break
            tail.append(part)
            length -= len(part)
        return "".join(reversed(tail))[start - length :]

    def runs(self) -> tuple[CharRun, ...]:
        """The character runs so far, sorted by start."""
        return tuple(CharRun(start, page, char, length) for start, page, char, length in self._runs)


def _cut(pieces: Sequence[Piece], low: int, high: int) -> list[Piece]:
    """The pieces of characters [low, high) of the pieces' joined text."""
    out: list[Piece] = []
    at = 0
    for text, char in pieces:
        lo, hi = max(low - at, 0), min(high - at, len(text))
        if lo < hi:
            out.append((text[lo:hi], None if char is None else char + lo))
        at += len(text)
    return out


def _row_pieces(cells: Sequence[list[Piece]]) -> tuple[list[Piece], tuple[Span, ...]]:
    """One table row's pieces, cells joined as `blocks.row_line` joins them, with
    each cell's span in the row."""
    line, spans = row_line(["".join(text for text, _ in cell) for cell in cells])
    if not line:
        return [], ()
    joined: list[Piece] = []
    for number, cell in enumerate(cells):
        if number:
            joined.append((CELL_SEPARATOR, None))
        joined.extend(cell)
    text = "".join(text for text, _ in joined)
    shift = len(text) - len(text.lstrip())
    return _cut(joined, shift, shift + len(line)), spans


def _table_rows(rows: Sequence[CellRow]) -> list[tuple[tuple[PdfLine, ...], ...]]:
    """The cells of `rows` that are table rows: spanning rows and rows with no cell
    left out."""
    return [row.cells for row in rows if not row.spanning and any(row.cells)]


def _bold_header(rows: Sequence[CellRow]) -> bool:
    """Whether the first of a table's rows (spanning rows left out) is its header
    by the font: every line piece of it is bold and every later row has a piece
    that is not (a table without such evidence has no header)."""
    cells = _table_rows(rows)
    if len(cells) < 2:
        return False

    def bold(row: Sequence[Sequence[PdfLine]]) -> bool:
        return all(piece.bold for cell in row for piece in cell)

    return bold(cells[0]) and not any(bold(row) for row in cells[1:])


_VALUE = re.compile(r"[<>≤≥~±$€£+-]?\s*\d")
"""Text that starts with a value: a number, maybe after a comparison or a currency."""


def _values_under_names(rows: Sequence[CellRow]) -> bool:
    """Whether the first of a table's rows (spanning rows left out) is its header by
    what it holds: none of its cells starts with a value (`_VALUE`), and in two
    columns or more every later row's cell does, two later rows at least (columns of
    values under their names: "Initial dose" and "Maintenance dose" over "1 tablet",
    "1/2 tablet"; a schedule's "Days 1 to 3 | Half a tablet" over "Day 4 | 1 tablet", a
    label's "Active substance | Carprofen" over "Strength | 50 mg", has one such
    column, and its first row is a row of the body)."""
    cells = [
        [" ".join(piece.text for piece in cell).strip() for cell in row]
        for row in _table_rows(rows)
    ]
    if len(cells) < 3 or any(_VALUE.match(cell) for cell in cells[0]):
        return False
    valued = [
        column
        for column, name in enumerate(cells[0])
        if name and all(column < len(row) and _VALUE.match(row[column]) for row in cells[1:])
    ]
    return len(valued) >= 2


def table_pieces(
    rows: Sequence[CellRow], words: WordSet
) -> tuple[list[Piece], tuple[TableRow, ...]]:
    """A table block's pieces from its cells, and its table rows (cell spans
    relative to the block's start; () when the block has none).

    Each cell's pieces are joined like a paragraph's lines (`join_lines`), a row's
    cells by `CELL_SEPARATOR` (`blocks.row_line`), rows by "\n"; a row with no text is
    left out. A spanning row (title, notes, section label) is a line of the block
    but no table row. The first table row is the header only when the font says so
    (`_bold_header`) or its cells name columns of values (`_values_under_names`).
    """
    out: list[Piece] = []
    table: list[TableRow] = []
    header = _bold_header(rows) or _values_under_names(rows)
    length = 0
    for row in rows:
        cells = [
            join_lines([clean_line(piece, words) for piece in cell], words) for cell in row.cells
        ]
        line, spans = (cells[0], ()) if row.spanning else _row_pieces(cells)
        if not line:
            continue
        if out:
            out.append((TABLE_ROW_SEPARATOR, None))
            length += len(TABLE_ROW_SEPARATOR)
        if not row.spanning:
            cell_spans = tuple((length + lo, length + hi) for lo, hi in spans)
            table.append(TableRow(cell_spans, header and not table))
        out.extend(line)
        length += sum(len(text) for text, _ in line)
    return out, tuple(table)
