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

HEADING_MAX_WORDS = 12
"""A line of more words than this is no plain-text heading."""
SHORT_WORD = 4
"""Words shorter than this ("of", "and", "the") need no capital in a numbered heading."""
_NUMBERED_HEADING = re.compile(r"(\d{1,2}(?:\.\d{1,2}){0,3})\.?\s+(\S.*)")
_NOT_A_HEADING_END = (".", ",", ";", ":", "!", "?")

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


def heading_level(paragraph: str) -> int | None:
    """The level of `paragraph` as a plain-text heading, None when it is none.

    A heading is one line of at most HEADING_MAX_WORDS words that does not end as a
    sentence, a clause or a lead-in does (`_NOT_A_HEADING_END`), and is either
    numbered and capitalised ("3. HOW TO TAKE PARACETAMOL", "2.1 Dosage and
    Administration": its level is the number's depth, 1 and 2) or written in capitals
    ("SIDE EFFECTS": level 0, placed by `parse_text` under the numbered headings open
    above it). "1. Wash your hands" is a list item, no heading.
    """
    line = paragraph.strip()
    if "\n" in line or not line or len(line.split()) > HEADING_MAX_WORDS:
        return None
    if line.endswith(_NOT_A_HEADING_END):
        return None
    numbered = _NUMBERED_HEADING.fullmatch(line)
    title = numbered.group(2) if numbered else line
    capitals = not any(ch.islower() for ch in title) and sum(ch.isupper() for ch in title) >= 2
    if numbered is None:
        return 0 if capitals else None
    words = [w for w in re.findall(r"[^\W\d_]+", title) if len(w) >= SHORT_WORD]
    if capitals or (words and all(w[0].isupper() for w in words)):
        return numbered.group(1).count(".") + 1
    return None


_SECTION_LINE = re.compile(r"(\d{1,2})\.\s+[A-Z]")
"""A line numbered "N." and going on with a capital: one that may open a section."""


def _next_section(paragraph: str, after: str | None, last: int, item: int | None) -> bool:
    """Whether `paragraph`, a line numbered in sentence case ("5. Food and
    allergies"), is a heading by its place: one line "N. Capitalised ..." that does
    not end as a sentence does, numbered next after `last` (the first number of the
    numbered heading before it, 0 when none) and not next after `item` (the number of
    the paragraph before it when that is a numbered list item, else None), over a
    paragraph (`after`, None at the end) that is not numbered or starts a list at 1
    ("3. What to bring" over "1. A packed lunch"). "1. Wash your hands" in section
    3, or over "2. Dry them", and "2. Their brothers" after "1. Pupils", stay list
    items."""
    line = paragraph.strip()
    numbered = _SECTION_LINE.match(line)
    if numbered is None or after is None or "\n" in line:
        return False
    if line.endswith(_NOT_A_HEADING_END) or len(line.split()) > HEADING_MAX_WORDS:
        return False
    number = int(numbered.group(1))
    if number != last + 1 or (item is not None and number == item + 1):
        return False
    below = _NUMBERED_HEADING.match(after.strip())
    return below is None or (below.group(1) == "1" and number > 1)


_RULE = re.compile(r"([=\-~*#_+])\1{2,}")
"""A line drawn with one character repeated: a banner's rule, a heading's underline."""


def _underlined(paragraph: str) -> tuple[str, int] | None:
    """For a two-line paragraph whose second line underlines the first ("1. STUDY
    DESIGN" over "-----"), the heading and its level: the number's depth when it is
    numbered (`heading_level`), else 1 under "=" and 2 under another character;
    None for any other paragraph."""
    lines = paragraph.strip().split("\n")
    if len(lines) != 2 or not _RULE.fullmatch(lines[1].strip()):
        return None
    heading = lines[0].strip()
    if not re.search(r"[^\W\d_]", heading) or len(heading.split()) > HEADING_MAX_WORDS:
        return None
    if heading.endswith(_NOT_A_HEADING_END):
        return None  # a sentence over a section break ("Take one daily." over "***")
    level = heading_level(heading)
    return heading, level or (1 if lines[1].strip()[0] == "=" else 2)


def _blocks(text: str) -> tuple[Block, ...]:
    """The paragraphs of `text` as blocks: headings (`heading_level`, `_next_section`)
    of kind "heading", each setting the section path of what follows it, and
    paragraphs."""
    blocks = []
    open_headings: list[tuple[int, str, bool]] = []  # (level, heading, numbered) open
    spans = paragraph_spans(text)
    last = 0  # the first number of the last numbered heading
    item: int | None = None  # the number of the paragraph before, a numbered list item
    for (start, end), after in zip(spans, [*spans[1:], None], strict=False):
        paragraph = text[start:end]
        level = heading_level(paragraph)
        heading = paragraph.strip()
        underlined = _underlined(paragraph) if level is None else None
        if underlined is not None:
            heading, level = underlined
        below = after and text[after[0] : after[1]]
        if level is None and _next_section(paragraph, below, last, item):
            level = 1
        listed = _NUMBERED_HEADING.match(paragraph.strip()) if level is None else None
        item = int(listed.group(1).split(".")[0]) if listed else None
        if level is not None:
            numbered = level > 0 and heading[:1].isdigit()
            if numbered:
                last = int(re.split(r"\D", heading, maxsplit=1)[0])
            elif level == 0:  # in capitals: under the numbered headings open above it
                level = 1 + max((lv for lv, _, num in open_headings if num), default=0)
            while open_headings and open_headings[-1][0] >= level:
                open_headings.pop()
            open_headings.append((level, heading, numbered))
        section = tuple(heading for _, heading, _ in open_headings)
        blocks.append(Block("heading" if level is not None else "paragraph", start, end, section))
    return tuple(blocks)


def parse_text(raw: bytes, path: str) -> ParsedDocument:
    """Parse a `.txt` file into its canonical text and its blocks.

    Blocks are the paragraphs separated by blank lines, each a trimmed span: a
    one-line paragraph that reads as a heading (`heading_level`, or `_next_section`
    by its place among the numbered ones) is a "heading" block and sets the section
    path of the blocks after it, until a heading of the same level or above; any
    other is a "paragraph"; so is a line underlined by a rule ("-----", `_underlined`).
    The title is the first non-empty line (stripped) that is no rule ("=====") if it
    has at most `TITLE_MAX_CHARS` characters, else the file name's stem; when that
    line and the next one are both written in capitals (`heading_level` 0: an issuer's
    name and the document's title, "BOROUGH OF EASTMERE" over "DOG CONTROL AND PUBLIC
    SPACES BYLAW 2024", in either order), the two joined by " — ". Raises
    `IngestError` if `raw` is not UTF-8.
    """
    text = decode_plain_text(raw, path)
    blocks = _blocks(text)
    title = PurePath(path).stem
    lines = [line.strip().lstrip("\ufeff").strip() for line in text.split("\n")]
    for k, stripped in enumerate(lines):
        if stripped and not _RULE.fullmatch(stripped):
            following = lines[k + 1] if k + 1 < len(lines) else ""
            if heading_level(stripped) == 0 and heading_level(following) == 0:
                stripped = f"{stripped} — {following}"
            if len(stripped) <= TITLE_MAX_CHARS:
                title = stripped
            break
    return ParsedDocument(text=text, title=title, format="text", blocks=blocks)
