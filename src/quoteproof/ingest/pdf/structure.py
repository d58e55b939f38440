"""Planning a PDF's blocks from its lines: furniture, tables, headings, paragraphs.

Pure functions over `PdfLine`s (no PDFium calls); `pdf.py` documents the rules.
A plan says which lines form a block and of what kind; `pdf.py` then builds the
canonical text of each plan with `text`.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from quoteproof.ingest.pdf.content import PageContent
from quoteproof.ingest.pdf.grid import CellRow
from quoteproof.ingest.pdf.headings import (
    BODY,
    Bookmark,
    LineStats,
    Role,
    font_heading_roles,
    is_list_start,
    line_stats,
    outline_heading_roles,
)
from quoteproof.ingest.pdf.page import PdfLine
from quoteproof.model import BlockKind
from quoteproof.text.numbering import bare_number

BAND = 0.08
"""Share of the page height, at the top and at the bottom, where running headers live."""

_FURNITURE: Role = ("furniture", 0)
_NOT_LETTERS = re.compile(r"[\W\d_]+")
_PAGE_OF = re.compile(r"\bpage\s+\d{1,4}(?:\s*(?:of|/)\s*\d{1,4})?\b", re.IGNORECASE)
"""A page number inside a running line: "Page 2", "page 2 of 3"."""
_SENTENCE_ENDS = (".", "!", "?", ":")
_PAGE_NUMBER = re.compile(
    r"(?:page\s+)?\d{1,4}(?:\s*(?:of|/)\s*\d{1,4})?|[-–—]\s*\d{1,4}\s*[-–—]|[ivxlc]{1,7}",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class BlockPlan:
    """Lines (all on one page) that become one block of `kind`; `level` orders headings
    (smaller is outer) and is 0 for other kinds. A table whose cells were read
    (`grid`) has them in `cells`, made of exactly its `lines`' characters."""

    kind: BlockKind
    page: int
    lines: tuple[PdfLine, ...]
    level: int = 0
    cells: tuple[CellRow, ...] | None = None


def _in_band(line: PdfLine, page: PageContent) -> bool:
    """Whether `line` lies in the top or bottom `BAND` of its page's height, or in the
    left or right `BAND` of its width (a margin note printed up the page's side)."""
    left, bottom, right, top = page.bbox
    band, side = (top - bottom) * BAND, (right - left) * BAND
    in_rows = line.y0 >= top - band or line.y1 <= bottom + band
    return in_rows or line.x1 <= left + side or line.x0 >= right - side


def _furniture_key(text: str, pages: int) -> str:
    """A running line's identity in a document of `pages` pages: its letters,
    lower-cased (page numbers, dates and spacing vary from page to page); in a
    two-page document, its words with digits but for a page number ("Page 2"), for
    two lines alike in letters on both pages may be headings ("Day 1", "Day 2")."""
    if pages == 2:
        return " ".join(_PAGE_OF.sub(" ", text.lower()).split())
    return _NOT_LETTERS.sub("", text.lower())


def furniture_roles(pages: Sequence[PageContent]) -> list[list[Role]]:
    """Return each line's first role: furniture or body.

    A line in the top or bottom `BAND` of its page, or in its left or right margin
    (`_in_band`), is furniture when it is a bare page number ("7", "Page 7 of 30",
    "- 7 -", "vii"), or when its identity (`_furniture_key`: its letters) occurs in
    the bands of at least half of the pages, and of two at least (both pages of a
    two-page document, where digits count too).
    """
    counts: Counter[str] = Counter()
    for page in pages:
        counts.update(
            {_furniture_key(line.text, len(pages)) for line in page.lines if _in_band(line, page)}
        )
    needed = max(2, math.ceil(len(pages) / 2))
    repeated = {key for key, n in counts.items() if key and n >= needed}
    roles: list[list[Role]] = []
    for page in pages:
        page_roles: list[Role] = []
        for line in page.lines:
            furniture = _in_band(line, page) and (
                _PAGE_NUMBER.fullmatch(line.text.strip()) is not None
                or _furniture_key(line.text, len(pages)) in repeated
            )
            page_roles.append(_FURNITURE if furniture else BODY)
        roles.append(page_roles)
    return roles


def mark_tables(pages: Sequence[PageContent], roles: list[list[Role]]) -> None:
    """Give each body line whose centre lies in a table box the role ("table", n)."""
    for page, page_roles in zip(pages, roles, strict=True):
        for number, (x0, y0, x1, y1) in enumerate(page.tables):
            for index, line in enumerate(page.lines):
                cx, cy = (line.x0 + line.x1) / 2, (line.y0 + line.y1) / 2
                if page_roles[index] == BODY and x0 <= cx <= x1 and y0 <= cy <= y1:
                    page_roles[index] = ("table", number)


def plan_blocks(
    pages: Sequence[PageContent], bookmarks: Sequence[Bookmark]
) -> tuple[list[BlockPlan], LineStats]:
    """Plan every page's blocks in reading order; also return the typography measured.

    Roles are decided in this order: furniture, tables, headings (the outline if it
    fits, else fonts); the remaining lines are grouped into paragraphs and list items.
    """
    roles = furniture_roles(pages)
    mark_tables(pages, roles)
    stats = line_stats(pages)
    levels = outline_heading_roles(pages, roles, bookmarks) if bookmarks else None
    by_outline = levels is not None
    if levels is None:
        levels = font_heading_roles(pages, roles, stats)
    plans: list[BlockPlan] = []
    for page, page_roles in zip(pages, roles, strict=True):
        plans.extend(_plan_page(page, page_roles, levels, stats, by_outline))
    return plans, stats


def _plan_page(
    page: PageContent,
    roles: list[Role],
    levels: dict[int, int],
    stats: LineStats,
    by_outline: bool,
) -> list[BlockPlan]:
    """The blocks of `page`. Consecutive heading lines of one role are one heading:
    with headings from the outline (`by_outline`) each role is one bookmark's lines,
    and with headings from fonts only lines aligned as one heading's are
    (`_wraps_heading`)."""
    plans: list[BlockPlan] = []
    current: list[PdfLine] = []
    current_kind: BlockKind = "paragraph"
    current_role: Role = BODY

    def flush() -> None:
        if current:
            level = levels[current_role[1]] if current_kind == "heading" else 0
            plans.append(BlockPlan(current_kind, page.number, tuple(current), level))
            current.clear()

    done_tables: set[int] = set()
    right = 0.0  # rightmost extent of the current block's lines
    bare_items = 0  # the number of the current list item numbered without a mark
    for index, line in enumerate(page.lines):
        role = roles[index]
        if role[0] == "table":
            if role[1] not in done_tables:
                flush()
                done_tables.add(role[1])
                rows = tuple(other for other, r in zip(page.lines, roles, strict=True) if r == role)
                plans.append(
                    BlockPlan("table", page.number, rows, cells=_cells(page, role[1], rows))
                )
            continue
        if role == _FURNITURE:
            flush()
            plans.append(BlockPlan("furniture", page.number, (line,)))
            continue
        if role[0] == "heading":
            same = bool(current) and current_role == role
            if not (same and (by_outline or _wraps_heading(current[-1], line))):
                flush()
                current_kind, current_role = "heading", role
            current.append(line)
            continue
        bare = _bare_item(page.lines[index:], current, bare_items)
        starts_list = bare is not None or is_list_start(line.text.strip())
        if (
            current
            and current_role == BODY
            and not starts_list
            and _continues(current, current_kind, line, right, stats)
        ):
            current.append(line)
            right = max(right, line.x1)
            continue
        flush()
        bare_items = bare or 0
        current_role = BODY
        current_kind = "list" if starts_list else "paragraph"
        current.append(line)
        right = line.x1
    flush()
    return plans


def _wraps_heading(previous: PdfLine, line: PdfLine) -> bool:
    """Whether heading `line` carries on the heading whose last line is `previous`
    (lines of one style): within one font size, it starts where `previous` starts,
    or under it (a hanging indent: "5.1 Hypersensitivity Including" /
    "Infusion-Related Reactions"), or is centred under it, or ends where it ends
    (set flush right). A line that starts well left of a centred line and ends
    elsewhere is a heading of its own (a centred letterhead "Willowbank Veterinary
    Clinic" over a left-aligned "Post-Operative Aftercare Sheet")."""
    tolerance = max(previous.size, line.size, 1.0)
    centred = abs((previous.x0 + previous.x1) - (line.x0 + line.x1)) / 2 <= tolerance
    flush_right = abs(previous.x1 - line.x1) <= tolerance
    return previous.x0 - tolerance <= line.x0 < previous.x1 or centred or flush_right


def _bare_item(lines: Sequence[PdfLine], block: list[PdfLine], last: int) -> int | None:
    """The number of the list item that `lines[0]` starts, numbered without a mark
    (`bare_number`), or None. Item `last` + 1 of the list that `block` is an item
    of (`last` its number, else 0) starts one; item 1 does when `block` ends a
    sentence or a lead-in ("take these steps:") and a later line of the page is item 2.
    """
    number = bare_number(lines[0].text.strip())
    if number is None or not block:
        return None
    if last and number == last + 1:
        return number
    ends = block[-1].text.rstrip().endswith(_SENTENCE_ENDS)
    if number == 1 and ends and any(bare_number(line.text.strip()) == 2 for line in lines[1:]):
        return number
    return None


def _cells(
    page: PageContent, number: int, lines: tuple[PdfLine, ...]
) -> tuple[CellRow, ...] | None:
    """The cells of table `number` of `page`, if they were read from exactly `lines`
    (a running header or footer inside the table leaves it without cells)."""
    if number >= len(page.cells) or page.cells[number].lines != lines:
        return None
    return page.cells[number].rows


def _continues(
    block: list[PdfLine], kind: BlockKind, line: PdfLine, right: float, stats: LineStats
) -> bool:
    """Whether `line` (not a list start) continues the paragraph or list item `block`,
    whose lines reach `right` at most.

    No after a font size change of over 15 %, for a line on the same row or above
    (another column), after a gap larger than the usual line pitch; a list item
    continues only with lines indented past its bullet, or at the margin while its
    last line does not end a sentence when it is numbered without a mark ("2 Call
    your doctor and tell them how much" / "was taken."); a paragraph ends after a
    sentence when the next line is indented (a first line) or the sentence's line is
    short, and a one-line block that ends a sentence when the next line reaches
    further right (a short list item over a paragraph); an indented line after one
    that stops mid-sentence carries it on (a hanging indent).
    """
    previous = block[-1]
    size = max(previous.size, line.size, 1.0)
    if abs(previous.size - line.size) > 0.15 * size:
        return False
    if previous.y0 - line.y0 < 0.5 * size or not stats.close_below(previous, line):
        return False
    ends_sentence = previous.text.rstrip().endswith(_SENTENCE_ENDS)
    if kind == "list":
        unmarked = bare_number(block[0].text.strip()) is not None and not ends_sentence
        return line.x0 > block[0].x0 + 0.3 * size or unmarked
    if len(block) >= 2 and ends_sentence and line.x0 > previous.x0 + 0.8 * size:
        return False
    if len(block) == 1 and ends_sentence and previous.x1 < line.x1 - 3 * size:
        return False  # a short line that ends a sentence under a longer one: its end
    return not (len(block) >= 2 and ends_sentence and previous.x1 < right - 3 * size)
