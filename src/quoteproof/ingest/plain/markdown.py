"""Markdown ingest: the file itself is the canonical text; markdown-it finds the blocks.

The canonical text is exactly the decoded file (see `decode_plain_text`), never the
rendered HTML, so a quote shows the source's own characters (`**`, `|` and all).
markdown-it-py tokens carry source line ranges (`Token.map`); each block is the
trimmed span of those lines.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise
from pathlib import PurePath
from typing import TYPE_CHECKING

from quoteproof.ingest.plain.text import decode_plain_text
from quoteproof.model import Block, BlockKind, ParsedDocument, SourceTable, TableRow
from quoteproof.text.spans import trim_span

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

_FRONT_MATTER_OPEN = "---"
_FRONT_MATTER_CLOSE = ("---", "...")
_WHITESPACE = re.compile(r"\s+")
_HTML_COMMENTS = re.compile(r"(?:\s*<!--(?:(?!-->).)*-->)+\s*", re.DOTALL)
_QUOTE_MARKERS = "> \t\r\n"
_CELL_PIPE = re.compile(r"(?<!\\)\|")  # a pipe that is not escaped ("\|" stays in its cell)


# Opening tokens whose whole element (up to the matching close) is one block.
_WHOLE_BLOCKS: dict[str, BlockKind] = {
    "list_item_open": "list",
    "table_open": "table",
    "paragraph_open": "paragraph",
}


def _parser() -> MarkdownIt:
    # Imported here: a command that parses no Markdown starts faster without it.
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table")


def _line_starts(text: str) -> list[int]:
    """Offsets where each line of `text` begins, plus `len(text)` as a sentinel."""
    starts = [0]
    starts.extend(i + 1 for i, char in enumerate(text) if char == "\n")
    starts.append(len(text))
    return starts


def front_matter_lines(text: str) -> int:
    """Return how many leading lines of `text` are YAML-style front matter (0 if none).

    Front matter opens with a `---` line at the very top (a BOM may precede it) and
    closes with the next `---` or `...` line; both fence lines are counted.
    """
    lines = text.split("\n")
    if not lines or lines[0].lstrip("\ufeff").rstrip() != _FRONT_MATTER_OPEN:
        return 0
    for number, line in enumerate(lines[1:], start=1):
        if line.rstrip() in _FRONT_MATTER_CLOSE:
            return number + 1
    return 0


def _inline_plain_text(token: Token) -> str:
    """Plain words of an inline token (markup dropped, breaks as spaces)."""
    parts: list[str] = []
    stack = list(reversed(token.children or []))
    while stack:
        child = stack.pop()
        if child.type in ("text", "code_inline", "html_inline"):
            if child.type != "html_inline":
                parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif child.children:
            stack.extend(reversed(child.children))
    return _WHITESPACE.sub(" ", "".join(parts)).strip()


def _closing_index(tokens: Sequence[Token], index: int) -> int:
    """Index of the token that closes the `*_open` token at `index`."""
    depth = 0
    for position in range(index, len(tokens)):
        depth += tokens[position].nesting
        if depth == 0:
            return position
    return len(tokens) - 1


def _row_cells(text: str, start: int, end: int, columns: int | None) -> tuple[tuple[int, int], ...]:
    """The cell spans of the pipe-table row `text[start:end]` (one line): split at
    unescaped pipes, outer pipes dropped, each cell trimmed (an empty cell is an
    empty span); at most `columns` cells (the header's count) when given."""
    bounds = [start, *(m.start() for m in _CELL_PIPE.finditer(text, start, end)), end]
    pieces = [(lo if i == 0 else lo + 1, hi) for i, (lo, hi) in enumerate(pairwise(bounds))]
    if len(pieces) > 1 and not text[pieces[0][0] : pieces[0][1]].strip():
        pieces = pieces[1:]  # before a leading pipe
    if len(pieces) > 1 and not text[pieces[-1][0] : pieces[-1][1]].strip():
        pieces = pieces[:-1]  # after a trailing pipe
    cells = []
    for lo, hi in pieces[:columns]:
        first, last = trim_span(text, lo, hi)
        cells.append((first, max(first, last)))
    return tuple(cells)


def _table(
    text: str, tokens: Sequence[Token], first: int, last: int, starts: Sequence[int]
) -> SourceTable | None:
    """The rows of the table `tokens[first:last]` (a top-level GFM table): its
    `thead` row is the header; None when a row's lines cannot be read."""
    rows: list[TableRow] = []
    header = True
    for token in tokens[first:last]:
        if token.type == "tbody_open":
            header = False
        if token.type != "tr_open" or token.map is None:
            continue
        line = token.map[0]
        lo, hi = trim_span(text, starts[line], starts[min(line + 1, len(starts) - 1)])
        columns = len(rows[0].cells) if rows else None
        cells = _row_cells(text, lo, hi, columns)
        if not cells:
            return None
        rows.append(TableRow(cells, header))
    return SourceTable(tuple(rows)) if rows else None


def parse_markdown(raw: bytes, path: str) -> ParsedDocument:
    """Parse a Markdown file into its canonical text (the file itself) and blocks.

    Blocks, in source order, each a trimmed non-empty span of the canonical text:
    headings ("heading"; they set the section path by level, and a heading's own
    section ends with its title), paragraphs (also those inside block quotes),
    each top-level list item with everything nested in it ("list"), a block quote
    nested deeper than markdown-it parses (`maxNesting`, 20) as one "paragraph"
    (its leading `>` markers left out), whole tables
    ("table", GFM pipe tables), fenced and indented code ("code") and raw HTML blocks
    other than comments ("paragraph"). Front matter at the very top is not a block.
    `tables` holds the rows and cells of each top-level pipe table (its header row
    marked), as spans of the file's own text.
    The title is the text of the first level-1 heading, else the file name's stem.
    Raises `IngestError` if `raw` is not UTF-8. O(len(raw)).
    """
    text = decode_plain_text(raw, path)
    skipped = front_matter_lines(text)
    lines = text.split("\n")
    source = "\n".join([""] * skipped + lines[skipped:])
    parser = _parser()
    tokens = parser.parse(source)
    starts = _line_starts(text)
    deepest = parser.options.maxNesting - 1  # markdown-it skips what lies deeper

    blocks: list[Block] = []
    tables: list[SourceTable] = []
    headings: list[tuple[int, str]] = []  # (level, title) of the open sections
    title: str | None = None

    def add(kind: BlockKind, line_range: list[int] | None, *, quoted: bool = False) -> None:
        if line_range is None:
            return
        first, last = line_range
        start, end = trim_span(text, starts[first], starts[min(last, len(starts) - 1)])
        if quoted:  # the text starts after the block quote markers
            start = end - len(text[start:end].lstrip(_QUOTE_MARKERS))
        if start < end:
            section = tuple(heading for _, heading in headings)
            blocks.append(Block(kind, start, end, section))

    index = 0
    while index < len(tokens):
        token = tokens[index]
        kind = token.type
        if kind == "heading_open":
            level = int(token.tag[1:])
            heading = _inline_plain_text(tokens[index + 1])
            if heading:
                while headings and headings[-1][0] >= level:
                    headings.pop()
                headings.append((level, heading))
                add("heading", token.map)
                if level == 1 and title is None:
                    title = heading
            index = _closing_index(tokens, index) + 1
            continue
        if kind in _WHOLE_BLOCKS:
            add(_WHOLE_BLOCKS[kind], token.map)
            closing = _closing_index(tokens, index)
            if kind == "table_open" and token.level == 0:  # not one in a block quote
                table = _table(text, tokens, index, closing, starts)
                if table is not None:
                    tables.append(table)
            index = closing + 1
            continue
        if kind == "blockquote_open" and token.level >= deepest:
            add("paragraph", token.map, quoted=True)
            index = _closing_index(tokens, index) + 1
            continue
        if kind in ("fence", "code_block"):
            add("code", token.map)
        elif kind == "html_block" and not _HTML_COMMENTS.fullmatch(token.content):
            add("paragraph", token.map)
        index += 1

    return ParsedDocument(
        text=text,
        title=title if title is not None else PurePath(path).stem,
        format="markdown",
        blocks=tuple(blocks),
        tables=tuple(tables),
    )
