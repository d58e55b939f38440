"""Plain-text ingest: canonical text of `.txt` files and their paragraph blocks.

The canonical text of a plain-text (or Markdown) file is the file decoded as UTF-8
with `\\r\\n` and lone `\\r` turned into `\\n`; nothing else is changed (a byte-order
mark stays as U+FEFF). Every offset quoteproof stores points into that string.
"""

from __future__ import annotations

import re
from pathlib import PurePath

from quoteproof.errors import IngestError, undecodable_cause
from quoteproof.model import Block, ParsedDocument
from quoteproof.text.spans import trim_span

TITLE_MAX_CHARS = 100
"""A first line longer than this is not used as a plain-text document's title."""

# One or more blank lines (lines holding only whitespace other than a line break).
_BLANK_LINES = re.compile(r"\n(?:[^\S\n]*\n)+")


def decode_plain_text(raw: bytes, path: str) -> str:
    """Return the canonical text of a plain-text file's bytes.

    Decodes `raw` strictly as UTF-8 (a BOM is kept as the character U+FEFF), then
    replaces `\\r\\n` and then every remaining `\\r` with `\\n`. Raises
    `IngestError(path, undecodable_cause("utf-8", raw, error))` naming the first bad
    byte and what to do. O(len(raw)).
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise IngestError(path, undecodable_cause("utf-8", raw, exc)) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def paragraph_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Return the trimmed, non-empty spans of `text[start:end]` separated by blank lines.

    A blank line is a line holding only whitespace. Spans are in order and do not
    overlap. O(end - start).
    """
    stop = len(text) if end is None else end
    spans: list[tuple[int, int]] = []
    cursor = start
    for match in _BLANK_LINES.finditer(text, start, stop):
        span = trim_span(text, cursor, match.start())
        if span[0] < span[1]:
            spans.append(span)
        cursor = match.end()
    span = trim_span(text, cursor, stop)
    if span[0] < span[1]:
        spans.append(span)
    return spans


def parse_text(raw: bytes, path: str) -> ParsedDocument:
    """Parse a `.txt` file into its canonical text and paragraph blocks.

    Blocks are the paragraphs separated by blank lines, each a trimmed span of kind
    "paragraph" with no section. The title is the first non-empty line (stripped) if
    it has at most `TITLE_MAX_CHARS` characters, else the file name's stem. Raises
    `IngestError` if `raw` is not UTF-8.
    """
    text = decode_plain_text(raw, path)
    blocks = tuple(Block("paragraph", s, e) for s, e in paragraph_spans(text))
    title = PurePath(path).stem
    for line in text.split("\n"):
        stripped = line.strip().lstrip("\ufeff").strip()
        if stripped:
            if len(stripped) <= TITLE_MAX_CHARS:
                title = stripped
            break
    return ParsedDocument(text=text, title=title, format="text", blocks=blocks)
