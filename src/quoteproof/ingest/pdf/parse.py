"""PDF ingest with PDFium (pypdfium2): structured blocks over PDFium's own text.

Canonical text. Each page's text comes from PDFium in its reading order, one
`FPDFText_GetText` call per page, split into lines at PDFium's generated "\\r\\n".
Inside a line, whitespace runs become one space and PDFium's control characters
are dropped; every other character is PDFium's, unchanged (no NFKC, no quote
folding). Lines of a paragraph, list item or heading are joined by one space,
rows of a table by "\\n", blocks by "\\n\\n", and pages follow one another with
"\\n\\n" too (a block never spans two pages). `Layout.char_runs` map every canonical
character that is a PDFium character back to its page and index; generated ones
(joins, separators, a space standing for several) are in no run.

Hyphens at line ends, one rule everywhere:
- a soft hyphen (U+00AD) ending a line is dropped and the lines are joined directly;
- a "-" ending a line after a lowercase letter and before a lowercase letter is
  dropped when the joined word occurs unhyphenated elsewhere in the document
  ("infec-" + "tion" -> "infection"); otherwise it is kept ("evidence-based");
  either way the lines are joined without a space;
- PDFium itself joins a line ending in "-" or U+00AD (after a letter, before a letter
  or digit) to the next one and puts its mark U+FFFE (U+0002 per char) in the
  hyphen's place; the mark gets the same rule as "-": dropped when the joined
  word occurs elsewhere, else shown as a generated "-". (PDFium does not say which
  of the two hyphens it was, so a soft one is only dropped by the word check.) A
  join to a line that does not follow (the characters on either side of the mark
  over `page.FAR_JOIN` line heights apart: a column's last word joined to the
  page's footer) is cut after the mark, into two lines.

Structure, decided per line in this order (details in `structure`,
`tables`, `headings`):
1. Furniture: a line in the top or bottom 8 % of its page, or in its left or right
   8 % (a note printed up the margin), that is a bare page number ("7", "Page 7 of
   30", "vii"), or, in documents of 3+ pages, whose letters (digits and spacing
   ignored) occur in those bands on at least half of the pages, is a `furniture`
   block (kept in the text, never chunked).
2. Tables: every page's path objects are scanned for rulings (thin paths, rectangle
   sides, straight segments of larger many-segment paths); a connected grid of at
   least 2 horizontal and 3 vertical rulings with 8 or more crossings (so a plain
   box or a call-out with a title bar is no table) is a table, and the lines whose
   centre lies in it become ONE `table` block, placed where its first line is.
   A regular grid (no merged cell; see `grid`) gets cells: each character goes
   to the cell its box's centre lies in, and the block is its rows, one line each,
   cells joined by " | " (a cell's lines by a space), kept as
   `ParsedDocument.tables`; its first row is the header only when the font shows
   it (all bold above a body that is not). Such a table that opens a page with no
   header row, its column rulings where those of the headed table that ended the
   page before stand, goes on that table (`_continues_table`: the page break split it, and its rows
   keep the header). A row ruled as one cell across the
   table (a title, notes, a section label) is a line of the block but no table
   row. Other tables keep PDFium's lines, joined by "\n".
   pdfplumber's table finder is not called at ingest: it costs 20-300 ms a page,
   and 100 of the 251 shared pages hold ruled tables, so it alone would cap ingest
   near 30 pages/s; the tests use it as the oracle instead.
3. Headings from the outline when it fits: each bookmark's title is matched
   (letters and digits, casefolded, leading numbers ignored) to up to six
   consecutive lines of its destination page (or the next); if at least half of
   the bookmarks are found, those lines are the headings and the outline levels
   give the section path. Otherwise from fonts: lines 15 % (and 1 pt) larger than
   the body size (the most common size, weighted by characters), or bold lines, or
   body-size lines in a colour that stands out, not starting like a list item,
   grouped when consecutive and aligned (within one font size, a line starts
   where the one above starts or under it, is centred under it, or ends where it
   ends; a centred letterhead over a left-aligned title is two headings), with few
   words (a "Table 12 …" caption may have more) and no final period, not reading
   as a piece of a sentence (lower case after any number: "100 mg/vial"; a last
   word like "and"; a next line carrying the sentence on); levels by style rank
   (size, then bold, colour), then by the depth of a leading number ("5" > "5.1").
   Styles seen only on page 1 are a cover's: their headings close at the next
   heading instead of becoming everyone's parent section. A caption's section
   ends after its table and notes.
4. Remaining lines form paragraphs, or list items when they start with a bullet or
   an enumerator ("•", "1.", "a)"), or with a number and no mark before a capital
   ("1 Stop giving"): item 1 after a line that ends a sentence or a lead-in, with an
   item 2 later on the page, or the number after the current item's (such an item
   wraps at the margin until a line ends a sentence), broken at a larger than usual
   line gap, an upward jump (new column), a size change, an indented first line
   after a sentence end (an indented line after one that stops mid-sentence is a
   hanging indent that carries the paragraph on), or a short line ending a
   sentence. (A sentence carried
   into the next column stays two paragraphs; a quote reads on across them:
   `llm.quotable`.)

Pages without a text layer: with `ocr` off a warning names them, and a document
with no text at all is refused; with `ocr` on, `ocr.py` (beside it) reads them (paragraph
blocks, no character runs, listed in `Layout.ocr_pages`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import PurePath

import pypdfium2 as pdfium  # type: ignore[import-untyped]
import pypdfium2.raw as pdfium_c  # type: ignore[import-untyped]

from quoteproof.errors import IngestError
from quoteproof.ingest.pdf.cells import read_cells, rule_tables, upright_grid
from quoteproof.ingest.pdf.content import PageContent
from quoteproof.ingest.pdf.grid import CellRow
from quoteproof.ingest.pdf.headings import is_caption, large_size
from quoteproof.ingest.pdf.meta import meaningful_title, read_bookmarks, read_language
from quoteproof.ingest.pdf.ocr import ocr_page
from quoteproof.ingest.pdf.page import (
    PdfLine,
    read_lines,
    scan_objects,
    upright,
    upright_lines,
)
from quoteproof.ingest.pdf.structure import BlockPlan, plan_blocks
from quoteproof.ingest.pdf.text import (
    TABLE_ROW_SEPARATOR,
    CanonicalText,
    WordSet,
    clean_line,
    join_lines,
    table_pieces,
)
from quoteproof.model import Block, Layout, ParsedDocument, SourceTable, TableRow
from quoteproof.pdfium_lock import pdfium as pdfium_lock

BLOCK_SEPARATOR = "\n\n"
"""What joins two blocks (and two pages) in a PDF's canonical text."""

MAX_TITLE_CHARS = 200
"""A page-1 block longer than this is not taken for the title."""

GENERIC_HEADINGS = frozenset(
    {
        "highlights of prescribing information",
        "full prescribing information",
        "full prescribing information: contents",
        "table of contents",
        "contents",
    }
)
"""Front-matter headings that name a part of many documents, never one document."""

NO_TEXT_AT_ALL = "no text layer on any page (scanned images?); OCR is off, run with --ocr"

_ENCRYPTION_CAUSES = {
    pdfium_c.FPDF_ERR_PASSWORD: "encrypted PDF: a password is required",
    pdfium_c.FPDF_ERR_SECURITY: "encrypted PDF: unsupported security handler",
}
_PDFIUM_REASONS = {
    pdfium_c.FPDF_ERR_UNKNOWN: "unknown error",
    pdfium_c.FPDF_ERR_FILE: "file not found or could not be opened",
    pdfium_c.FPDF_ERR_FORMAT: "data format error",
    pdfium_c.FPDF_ERR_PAGE: "page not found or content error",
}
_SPACES = re.compile(r"\s+")
_DECORATION = " -–—_=*·•"  # stripped from the ends of a heading's section label
_CAPTIONED = ("heading", "table", "furniture")  # kinds that leave a caption's section open


@dataclass(frozen=True)
class _Pages:
    """What reading the pages gave: their content, OCR paragraphs and warnings."""

    contents: tuple[PageContent, ...]
    ocr_plans: tuple[BlockPlan, ...]
    ocr_pages: tuple[int, ...]
    warnings: tuple[str, ...]


def open_pdf(raw: bytes, path: str) -> pdfium.PdfDocument:
    """Open PDF bytes with PDFium; raise `IngestError(path, cause)` when it cannot.

    Causes: "encrypted PDF: a password is required", "PDF has no pages",
    "corrupt or truncated PDF (PDFium: <reason>)". The document holds on to `raw`;
    the caller closes it.
    """
    try:
        return pdfium.PdfDocument(raw)
    except pdfium.PdfiumError:
        raise IngestError(path, _open_failure(raw)) from None


def _open_failure(raw: bytes) -> str:
    """Why PDFium will not open `raw`.

    pypdfium2 refuses a document without pages too, with whatever error code an
    earlier failure left, so the cause is found by loading the bytes again here.
    """
    handle = pdfium_c.FPDF_LoadMemDocument64(raw, len(raw), None)
    if handle:
        pdfium_c.FPDF_CloseDocument(handle)
        return "PDF has no pages"
    code = int(pdfium_c.FPDF_GetLastError())
    if code in _ENCRYPTION_CAUSES:
        return _ENCRYPTION_CAUSES[code]
    return f"corrupt or truncated PDF (PDFium: {_PDFIUM_REASONS.get(code, 'unknown error')})"


def _read_page(document: pdfium.PdfDocument, index: int) -> tuple[PageContent, pdfium.PdfPage]:
    """Read page `index`, geometry turned to its display orientation; the caller
    closes the returned page."""
    page = document[index]
    try:
        left, bottom, right, top = (float(value) for value in page.get_bbox())
        box = (left, bottom, right, top)
        rotation = int(page.get_rotation())
        grids, stacks, has_image = scan_objects(page, box)
        grids = tuple(upright_grid(grid, rotation, box) for grid in grids)
        textpage = page.get_textpage()
        try:
            lines = upright_lines(read_lines(textpage, index + 1), rotation, box)
            upright_stacks = [upright_grid(stack, rotation, box) for stack in stacks]
            grids += rule_tables(textpage, lines, upright_stacks, rotation, box)
            cells = read_cells(textpage, lines, grids, rotation, box)
        finally:
            textpage.close()
    except BaseException:
        page.close()
        raise
    content = PageContent(
        index + 1,
        upright(box, rotation, box),
        lines,
        tuple(grid.box for grid in grids),
        has_image,
        cells,
    )
    return content, page


def _read_pages(document: pdfium.PdfDocument, path: str, ocr: bool) -> _Pages:
    contents: list[PageContent] = []
    ocr_plans: list[BlockPlan] = []
    ocr_pages: list[int] = []
    warnings: list[str] = []
    for index in range(len(document)):
        number = index + 1
        try:
            content, page = _read_page(document, index)
        except pdfium.PdfiumError as exc:
            warnings.append(f"page {number} could not be read (PDFium: {exc})")
            contents.append(PageContent(number, (0.0, 0.0, 0.0, 0.0), ()))
            continue
        try:
            contents.append(content)
            if content.lines or not content.has_image:
                continue
            if not ocr:
                warnings.append(f"page {number} has no text layer; OCR is off")
                continue
            for lines in ocr_page(page, number, path):
                plan_lines = tuple(PdfLine(number, None, line) for line in lines)
                ocr_plans.append(BlockPlan("paragraph", number, plan_lines))
            ocr_pages.append(number)
            warnings.append(f"page {number}: text from OCR")
        finally:
            page.close()
    return _Pages(tuple(contents), tuple(ocr_plans), tuple(ocr_pages), tuple(warnings))


def _all_line_texts(pages: Sequence[PageContent], plans: Sequence[BlockPlan]) -> Iterator[str]:
    for page in pages:
        for line in page.lines:
            yield line.text
    for plan in plans:
        for line in plan.lines:
            yield line.text


@dataclass(frozen=True)
class _Assembled:
    text: str
    blocks: tuple[Block, ...]
    layout: Layout
    title: str | None
    tables: tuple[SourceTable, ...]


def _title_candidate(plan: BlockPlan, text: str, large: float) -> tuple[float, str] | None:
    """(size, text) of a page-1 block that may give the title: a heading, or a block
    set in a size counted as large, with letters; None for other blocks."""
    if plan.kind in ("furniture", "table") or len(text) > MAX_TITLE_CHARS:
        return None
    if text.strip(" :").casefold() in GENERIC_HEADINGS:
        return None
    if sum(char.isalpha() for char in text) < 2:
        return None
    size = max(line.size for line in plan.lines)
    return (size, _said_once(text)) if plan.kind == "heading" or size >= large else None


def _said_once(title: str) -> str:
    """`title` cut where its first two words start again: one heading naming two
    forms of a product ("VEKLURY® (remdesivir) for injection, … VEKLURY®
    (remdesivir) injection, …") gives the first as the title."""
    words = title.split()
    if len(words) < 4:
        return title
    padded = f" {title} "
    again = padded.find(f" {words[0]} {words[1]} ", 1)
    return title[: again - 1].rstrip() if again > 0 else title


def _at_body_size(plan: BlockPlan, body: float) -> bool:
    """Whether a block is set at (about) the body size or larger."""
    return max(line.size for line in plan.lines) >= body - 0.5


COLUMN_TOLERANCE = 3.0
"""How far apart (points) two tables' column rulings may stand for one table to go on
the other across a page break."""


def _same_columns(a: Sequence[CellRow], b: Sequence[CellRow]) -> bool:
    """Whether the tables of cell rows `a` and `b` have their column rulings at the
    same places (`CellRow.columns`, within COLUMN_TOLERANCE)."""
    left, right = (a[0].columns if a else ()), (b[0].columns if b else ())
    return (
        bool(left)
        and len(left) == len(right)
        and all(abs(x - y) <= COLUMN_TOLERANCE for x, y in zip(left, right, strict=True))
    )


def _continues_table(
    blocks: Sequence[Block],
    tables: Sequence[SourceTable],
    rows: tuple[TableRow, ...],
    cells: tuple[Sequence[CellRow], Sequence[CellRow]],
    starts: tuple[int, int],
) -> bool:
    """Whether the table `rows` (no header row) opening a page (`starts`: where it
    starts, where its page does) goes on the table that ended the page before: the
    last block is that table, it has a header row, and the two tables' column rulings
    (`cells`: its cell rows and these) stand at the same places (a table the page
    break split, the header not repeated: "Lost key or fob replacement | £45" under
    "Payment | Amount"; a contacts table of three other columns is another table)."""
    if starts[0] != starts[1] or not blocks or not tables or any(row.header for row in rows):
        return False
    before = tables[-1]
    return (
        blocks[-1].kind == "table"
        and before.rows[-1].end == blocks[-1].end
        and before.rows[0].header
        and _same_columns(*cells)
    )


def _assemble(
    plans: Sequence[BlockPlan],
    page_count: int,
    ocr_pages: tuple[int, ...],
    words: WordSet,
    sizes: tuple[float, float],
) -> _Assembled:
    """Build the canonical text, blocks and layout from the plans (in page order).

    `sizes` are the body size and the smallest large size. A caption heading
    (`is_caption`: "Table 12 …") is closed by the first later block that is no
    table, heading or furniture and is set at body size or larger (the table's notes, set
    smaller, stay in it), so the text after a table is not labelled with its
    caption. Also picks the title candidate: the largest-font heading (or
    large-font block) on page 1, the first of equals.
    """
    body, large = sizes
    canonical = CanonicalText()
    blocks: list[Block] = []
    page_starts: list[int] = []
    headings: list[tuple[int, str]] = []
    section: tuple[str, ...] = ()
    title: tuple[float, str] | None = None
    caption_open = False
    tables: list[SourceTable] = []
    last_cells: Sequence[CellRow] = ()  # the cell rows of the last table begun
    for plan in plans:
        found: tuple[TableRow, ...] = ()
        if plan.cells is not None:
            pieces, found = table_pieces(plan.cells, words)
        else:
            separator = TABLE_ROW_SEPARATOR if plan.kind == "table" else " "
            pieces = join_lines([clean_line(line, words) for line in plan.lines], words, separator)
        if not pieces:
            continue
        if canonical.length:
            canonical.append(BLOCK_SEPARATOR, plan.page, None)
        while len(page_starts) < plan.page:
            page_starts.append(canonical.length)
        start = canonical.length
        canonical.extend(pieces, plan.page)
        if found and plan.cells is not None:
            rows = tuple(_shifted(row, start) for row in found)
            starts = (start, page_starts[plan.page - 1])
            if _continues_table(blocks, tables, rows, (last_cells, plan.cells), starts):
                tables[-1] = SourceTable(tables[-1].rows + rows)
            else:
                tables.append(SourceTable(rows))
                last_cells = plan.cells
        if plan.kind == "heading" or plan.page == 1:
            text = canonical.text_from(start)
            if plan.kind == "heading":
                while headings and headings[-1][0] >= plan.level:
                    headings.pop()
                headings.append((plan.level, text.strip(_DECORATION) or text))
                section = tuple(heading for _, heading in headings)
                caption_open = is_caption(headings[-1][1])
            candidate = _title_candidate(plan, text, large) if plan.page == 1 else None
            if candidate is not None and (title is None or candidate[0] > title[0]):
                title = candidate
        if caption_open and plan.kind not in _CAPTIONED and _at_body_size(plan, body):
            headings.pop()
            section, caption_open = tuple(heading for _, heading in headings), False
        blocks.append(Block(plan.kind, start, canonical.length, section))
    while len(page_starts) < page_count:
        page_starts.append(canonical.length)
    layout = Layout(tuple(page_starts), canonical.runs(), ocr_pages)
    title_text = title[1] if title else None
    return _Assembled(canonical.text(), tuple(blocks), layout, title_text, tuple(tables))


def _shifted(row: TableRow, start: int) -> TableRow:
    """`row` with its cell spans moved by `start`."""
    return TableRow(tuple((lo + start, hi + start) for lo, hi in row.cells), row.header)


def parse_pdf(raw: bytes, path: str, *, ocr: bool = False) -> ParsedDocument:
    """Parse PDF bytes into canonical text, blocks and a page layout (format "pdf").

    `raw` is non-empty and starts with a PDF signature (the caller checked). The rules
    for text, hyphens, furniture, tables, headings and paragraphs are in this
    module's docstring. The title is the metadata Title when `meaningful_title`,
    else the largest-font heading on page 1 (the first of equals; a block in a
    clearly larger font counts as a heading here; cut where its first two words
    start again, so a title naming two forms of a product is said once), else the
    file stem; `language` is
    the catalog's /Lang, else "en". Warnings name pages without a text layer (and
    pages read by OCR or not readable).

    Raises `IngestError(path, cause)`: the causes of `open_pdf`; NO_TEXT_AT_ALL when
    no page has text and `ocr` is off; the OCR errors of `ocr.ocr_page` when `ocr` is
    on. PDFium is used under the process's lock (`pdfium_lock`), and its objects are
    closed before returning. Cost: one text extraction per
    page plus a few PDFium calls per line and per page object; OCR adds seconds per
    scanned page.
    """
    with pdfium_lock():  # PDFium is not thread-safe (a caller may parse in threads)
        document = open_pdf(raw, path)
        try:
            pages = _read_pages(document, path, ocr)
            bookmarks = read_bookmarks(document)
            metadata_title = str(document.get_metadata_value("Title"))
            language = read_language(document)
        finally:
            document.close()
    if not ocr and not any(page.lines for page in pages.contents):
        raise IngestError(path, NO_TEXT_AT_ALL)
    plans, stats = plan_blocks(pages.contents, bookmarks)
    ordered = sorted([*plans, *pages.ocr_plans], key=lambda plan: plan.page)
    words = WordSet(lambda: _all_line_texts(pages.contents, pages.ocr_plans))
    large = large_size(stats.body_size)
    sizes = (stats.body_size, large)
    assembled = _assemble(ordered, len(pages.contents), pages.ocr_pages, words, sizes)
    if meaningful_title(metadata_title, path):
        title = _SPACES.sub(" ", metadata_title).strip()
    else:
        title = assembled.title or PurePath(path).stem
    return ParsedDocument(
        text=assembled.text,
        title=title,
        format="pdf",
        blocks=assembled.blocks,
        layout=assembled.layout,
        language=language,
        warnings=pages.warnings,
        tables=assembled.tables,
    )
