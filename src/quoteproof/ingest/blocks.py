"""Building a canonical text out of blocks, for formats whose text is *extracted*.

HTML, DOCX and SPL parsers do not copy their input: they emit one block text at a
time (a heading, a paragraph, a whole list, a whole table) and the canonical text is
those texts joined by `BLOCK_SEPARATOR`. `BlockBuilder` does the bookkeeping: block
offsets, and the heading path each block lies under.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from quoteproof.model import Block, BlockKind, Layout, ParsedDocument, SourceTable, TableRow

BLOCK_SEPARATOR = "\n\n"
"""What joins two blocks' texts in an extracted document's canonical text."""

ROW_SEPARATOR = "\n"
"""What joins two rows of a table (or two items of a list) in a block's text."""

CELL_SEPARATOR = " | "
"""What joins two cells of a table row in a table block's text."""

_WHITESPACE = re.compile(r"\s+")


def collapse_whitespace(text: str) -> str:
    """Return `text` with every run of whitespace turned into one space, stripped."""
    return _WHITESPACE.sub(" ", text).strip()


Span = tuple[int, int]


@dataclass(frozen=True)
class RowCells:
    """One table row as the parser read it: its cells' texts (whitespace collapsed),
    whether it is a header row, and whether a cell of it spans several columns or
    rows (`merged`: its cells do not line up with the columns one to one)."""

    cells: Sequence[str]
    header: bool = False
    merged: bool = False


def row_line(cells: Sequence[str]) -> tuple[str, tuple[Span, ...]]:
    """A table row as one line, cells joined by `CELL_SEPARATOR` and the line
    stripped ("" if every cell is empty), with each cell's span in the line (an
    empty cell at either end gets an empty span at that end). O(length)."""
    if not any(cells):
        return "", ()
    joined = CELL_SEPARATOR.join(cells)
    line = joined.strip()
    shift = len(joined) - len(joined.lstrip())
    spans: list[Span] = []
    at = 0
    for cell in cells:
        lo = min(max(at - shift, 0), len(line))
        spans.append((lo, min(lo + len(cell), len(line))))
        at += len(cell) + len(CELL_SEPARATOR)
    return line, tuple(spans)


def table_lines(rows: Sequence[RowCells]) -> list[tuple[str, tuple[Span, ...], bool]]:
    """The non-empty lines of a table's rows (`row_line`), each with its cell spans
    and header flag, in order."""
    lines = []
    for row in rows:
        line, spans = row_line(row.cells)
        if line:
            lines.append((line, spans, row.header))
    return lines


@dataclass
class BlockBuilder:
    """Collects block texts in document order, then joins them into a `ParsedDocument`.

    Headings open sections by level: a heading closes every open section of the same
    or a deeper level, and its own block's section path ends with its title. Empty
    texts are ignored. Every method is O(length of its text) amortised.
    """

    texts: list[str] = field(default_factory=list)
    kinds: list[BlockKind] = field(default_factory=list)
    sections: list[tuple[str, ...]] = field(default_factory=list)
    headings: list[tuple[int, str]] = field(default_factory=list)
    tables: list[SourceTable] = field(default_factory=list)
    length: int = 0
    """Length of the canonical text built so far."""

    def section(self) -> tuple[str, ...]:
        """The heading path (outermost first) a block added now would lie under."""
        return tuple(title for _, title in self.headings)

    def next_start(self) -> int:
        """The canonical offset at which the next non-empty block will start."""
        return self.length + len(BLOCK_SEPARATOR) if self.texts else 0

    def add(self, kind: BlockKind, text: str) -> bool:
        """Append a block of `kind` holding `text`; return False (and add nothing) if empty."""
        if not text:
            return False
        self.length = self.next_start() + len(text)
        self.texts.append(text)
        self.kinds.append(kind)
        self.sections.append(self.section())
        return True

    def add_table(self, rows: Sequence[RowCells]) -> bool:
        """Append a "table" block of `rows` (`table_lines`, joined by `ROW_SEPARATOR`)
        and keep its row and cell spans; False (and nothing kept) if the block is
        not added. A row is a header row only when the parser marked it so (a
        table without one has no header: no data row is taken for column names).
        The spans of a table whose cells do not line up with its columns (a merged
        cell, rows of different lengths) are not kept: shown under the wrong column
        names, a cell would be misread."""
        lines = table_lines(rows)
        if not self.add("table", ROW_SEPARATOR.join(line for line, _, _ in lines)):
            return False
        aligned = len({len(row.cells) for row in rows if any(row.cells)}) == 1
        if not aligned or any(row.merged for row in rows):
            return True
        offset = self.length - sum(len(line) for line, _, _ in lines)
        offset -= len(ROW_SEPARATOR) * (len(lines) - 1)
        table_rows = []
        for line, spans, header in lines:
            cells = tuple((offset + lo, offset + hi) for lo, hi in spans)
            table_rows.append(TableRow(cells, header))
            offset += len(line) + len(ROW_SEPARATOR)
        self.tables.append(SourceTable(tuple(table_rows)))
        return True

    def close_sections(self, level: int) -> None:
        """Close the open sections of level `level` or deeper."""
        while self.headings and self.headings[-1][0] >= level:
            self.headings.pop()

    def heading(self, level: int, title: str) -> bool:
        """Open a section `title` at `level` and add its heading block (False if empty)."""
        if not title:
            return False
        self.close_sections(level)
        self.headings.append((level, title))
        return self.add("heading", title)

    def first_heading(self) -> str | None:
        """The text of the first heading block, or None if there is none."""
        for text, kind in zip(self.texts, self.kinds, strict=True):
            if kind == "heading":
                return text
        return None

    def build(
        self,
        *,
        title: str,
        format: str,
        layout: Layout | None = None,
        language: str = "en",
    ) -> ParsedDocument:
        """Join the blocks into the canonical text; each block is `text[start:end]`."""
        blocks: list[Block] = []
        offset = 0
        for text, kind, section in zip(self.texts, self.kinds, self.sections, strict=True):
            blocks.append(Block(kind, offset, offset + len(text), section))
            offset += len(text) + len(BLOCK_SEPARATOR)
        return ParsedDocument(
            text=BLOCK_SEPARATOR.join(self.texts),
            title=title,
            format=format,
            blocks=tuple(blocks),
            layout=layout,
            language=language,
            tables=tuple(self.tables),
        )
