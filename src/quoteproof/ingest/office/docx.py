"""DOCX ingest: the body of a Word document as headings, paragraphs, lists and tables.

The canonical text is built (see `quoteproof.ingest.blocks`): one block per heading
or paragraph (whitespace collapsed), one per run of consecutive list paragraphs
(items joined by "\\n"), one per table (rows joined by "\\n", cells by " | "). Where
Word saved page breaks, `ParsedDocument.layout` says where each page starts.

The archive is checked before python-docx sees it (`office.archive`: zip bombs and
what is not a DOCX are refused without decompressing anything). A member that
inflates to more than it declares is bounded by the memory limit of the process
that parses the file (`ingest.parse_limits`), and its CRC by zipfile.
"""

from __future__ import annotations

import io
import re
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, Literal

from lxml import etree

from quoteproof.errors import IngestError
from quoteproof.ingest.blocks import (
    ROW_SEPARATOR,
    BlockBuilder,
    RowCells,
    collapse_whitespace,
    row_line,
)
from quoteproof.ingest.office.archive import check_docx_archive
from quoteproof.model import Layout, ParsedDocument

if TYPE_CHECKING:
    from docx.document import Document as WordDocument

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_P, _TBL, _TR, _TC = f"{_W}p", f"{_W}tbl", f"{_W}tr", f"{_W}tc"
_PPR, _RPR, _R, _T = f"{_W}pPr", f"{_W}rPr", f"{_W}r", f"{_W}t"
_BR, _CR, _TAB, _PTAB = f"{_W}br", f"{_W}cr", f"{_W}tab", f"{_W}ptab"
_SDT, _SDT_CONTENT, _SDT_PR = f"{_W}sdt", f"{_W}sdtContent", f"{_W}sdtPr"
_SECT_PR, _VAL, _TYPE = f"{_W}sectPr", f"{_W}val", f"{_W}type"
_LOOK_FIRST_ROW = 0x0020
_RENDERED_BREAK = f"{_W}lastRenderedPageBreak"
_NO_BREAK_HYPHEN = f"{_W}noBreakHyphen"
_BODY = f"{_W}body"
# Inline wrappers whose runs are part of the paragraph's visible text. Deleted text
# (w:del, w:moveFrom), field codes (w:instrText) and drawings are not descended into.
_INLINE_WRAPPERS = frozenset(
    f"{_W}{name}"
    for name in (
        "r",
        "hyperlink",
        "ins",
        "moveTo",
        "smartTag",
        "fldSimple",
        "sdt",
        "sdtContent",
        "customXml",
        "dir",
        "bdo",
    )
)
_HEADING_STYLE = re.compile(r"heading ([1-9])", re.IGNORECASE)
_CONTENTS_STYLE = re.compile(r"toc [1-9]", re.IGNORECASE)
_FALSE = frozenset({"0", "false", "off"})
_BODY_TEXT_OUTLINE = 9  # w:outlineLvl 9 means "body text"

BreakKind = Literal["rendered", "explicit", "before"]
"""Where a page break comes from: Word's last layout (`w:lastRenderedPageBreak`), a
hard break (`w:br w:type="page"`, a section break), or `w:pageBreakBefore` (which
starts no new page at the top of one)."""

Breaks = list[tuple[BreakKind, int]]
"""Page breaks inside a piece of text: (kind, character offset in the text)."""


def _is_on(element: Any) -> bool:
    """Whether an OOXML on/off property element (`<w:b/>`, `w:val="0"`) is on."""
    return element is not None and element.get(_VAL, "true").lower() not in _FALSE


@dataclass(frozen=True)
class _StyleInfo:
    """What a paragraph style makes of a paragraph (through its base styles)."""

    level: int | None = None  # heading level: 0 for "Title", N for "Heading N"
    is_list: bool = False
    break_before: bool = False
    is_contents: bool = False  # a line of a table of contents ("TOC 1" ... "TOC 9")


def _style_info(style: Any) -> _StyleInfo:
    """Read a python-docx paragraph style and its base styles (nearest first).

    A heading level comes from the name ("Title" -> 0, "Heading N" -> N), else from
    `w:outlineLvl` (0-based); a list style has a "List" name or `w:numPr`.
    """
    level: int | None = None
    is_list = break_before = is_contents = False
    seen: set[str] = set()
    while style is not None and style.style_id not in seen:
        seen.add(style.style_id)
        name = style.name or ""
        heading = _HEADING_STYLE.fullmatch(name)
        ppr = style.element.find(_PPR)
        if level is None and name.lower() == "title":
            level = 0
        elif level is None and heading is not None:
            level = int(heading.group(1))
        elif level is None and ppr is not None:
            level = _outline_level(ppr)
        is_list = is_list or name.lower().startswith("list") or _numbered(ppr)
        is_contents = is_contents or _CONTENTS_STYLE.fullmatch(name) is not None
        break_before = break_before or (
            ppr is not None and _is_on(ppr.find(f"{_W}pageBreakBefore"))
        )
        style = style.base_style
    return _StyleInfo(level, is_list, break_before, is_contents)


def _outline_level(ppr: Any) -> int | None:
    """The heading level a `w:outlineLvl` in `ppr` gives (1-based), or None."""
    element = ppr.find(f"{_W}outlineLvl")
    value = element.get(_VAL) if element is not None else None
    if value is None or not value.isdigit() or int(value) >= _BODY_TEXT_OUTLINE:
        return None
    return int(value) + 1


def _numbered(ppr: Any) -> bool:
    """Whether `ppr` gives its paragraph list numbering (numId 0 removes it)."""
    num_id = ppr.find(f"{_W}numPr/{_W}numId") if ppr is not None else None
    return num_id is not None and num_id.get(_VAL) not in (None, "0")


def _paragraph_pieces(paragraph: Any) -> tuple[str, Breaks]:
    """The raw text of a `w:p` (before whitespace is collapsed) and its page breaks.

    Tabs give "\\t", line breaks "\\n", a page break a space; runs hidden with
    `w:vanish`, deleted text and field codes are left out.
    """
    parts: list[str] = []
    breaks: Breaks = []
    length = 0
    stack = list(reversed(paragraph))
    while stack:
        element = stack.pop()
        tag = element.tag
        piece = ""
        if tag == _T:
            piece = element.text or ""
        elif tag in (_TAB, _PTAB):
            piece = "\t"
        elif tag == _BR and element.get(_TYPE) == "page":
            breaks.append(("explicit", length))
            piece = " "
        elif tag in (_BR, _CR):
            piece = "\n"
        elif tag == _NO_BREAK_HYPHEN:
            piece = "-"
        elif tag == _RENDERED_BREAK:
            breaks.append(("rendered", length))
        elif tag in _INLINE_WRAPPERS and not (
            tag == _R and _is_on(element.find(f"{_RPR}/{_W}vanish"))
        ):
            stack.extend(reversed(element))
        parts.append(piece)
        length += len(piece)
    return "".join(parts), breaks


def _collapse(raw: str, breaks: Breaks) -> tuple[str, Breaks]:
    """`raw` with whitespace collapsed, and its breaks moved to the collapsed offsets.

    A break lands on the first character of the text that follows it. O(len(raw) *
    len(breaks)).
    """
    text = collapse_whitespace(raw)
    moved: Breaks = []
    for kind, offset in breaks:
        position = len(collapse_whitespace(raw[:offset] + "x")) - 1
        moved.append((kind, position + (position < len(text) and text[position] == " ")))
    return text, moved


@dataclass
class _Pages:
    """Page breaks placed on the canonical text as its pieces are laid down.

    A break at the very end of a piece (or in a piece with no text) belongs to the
    start of the next piece that has text.
    """

    rendered: list[int] = field(default_factory=list)
    explicit: list[int] = field(default_factory=list)
    pending: list[BreakKind] = field(default_factory=list)

    def place(self, start: int, length: int, breaks: Breaks) -> None:
        """Lay down a piece of `length` characters at canonical offset `start`."""
        if length == 0:
            self.pending.extend(kind for kind, _ in breaks)
            return
        for kind in self.pending:
            self._record(kind, start)
        self.pending.clear()
        for kind, offset in breaks:
            if offset >= length:
                self.pending.append(kind)
            else:
                self._record(kind, start + offset)

    def _record(self, kind: BreakKind, offset: int) -> None:
        if kind == "rendered":
            self.rendered.append(offset)
        elif kind == "explicit" or not self.explicit or self.explicit[-1] != offset:
            self.explicit.append(offset)

    def layout(self) -> Layout | None:
        """Page starts from Word's last layout if it saved one, else from hard breaks.

        None when the document records no page break before any text.
        """
        starts = self.rendered or self.explicit
        return Layout(page_starts=(0, *starts)) if starts else None


def _body_elements(container: Any) -> Iterator[Any]:
    """The `w:p` and `w:tbl` children of `container` in document order, looking into
    content controls (`w:sdt`) except a table of contents."""
    for child in container:
        if child.tag in (_P, _TBL):
            yield child
        elif child.tag == _SDT and not _is_table_of_contents(child):
            content = child.find(_SDT_CONTENT)
            if content is not None:
                yield from _body_elements(content)


def _is_table_of_contents(sdt: Any) -> bool:
    gallery = sdt.find(f"{_SDT_PR}/{_W}docPartObj/{_W}docPartGallery")
    return gallery is not None and gallery.get(_VAL) == "Table of Contents"


def _section_starts_new_page(body: Any) -> list[bool]:
    """For each section break (a `w:sectPr` in a paragraph), in order: whether the
    section after it starts on a new page (its `w:type` is not "continuous")."""
    types: list[str | None] = []
    for sect_pr in body.iter(_SECT_PR):
        if sect_pr.getparent().tag in (_PPR, _BODY):  # not an old one in w:sectPrChange
            kind = sect_pr.find(_TYPE)
            types.append(kind.get(_VAL) if kind is not None else None)
    return [kind != "continuous" for kind in types[1:]]


@dataclass
class _DocxReader:
    """Walks a document body into blocks and page breaks, in document order."""

    styles: dict[str, Any]  # paragraph styles by style id
    default_style: Any
    builder: BlockBuilder = field(default_factory=BlockBuilder)
    pages: _Pages = field(default_factory=_Pages)
    list_items: list[str] = field(default_factory=list)
    list_start: int = 0  # canonical offset of the next item of the open list
    title_paragraph: str | None = None
    section_breaks: Iterator[bool] = field(default_factory=lambda: iter(()))
    style_infos: dict[str | None, _StyleInfo] = field(default_factory=dict)

    def read(self, body: Any) -> None:
        """Read every paragraph and table of `body` (a `w:body`)."""
        self.section_breaks = iter(_section_starts_new_page(body))
        for element in _body_elements(body):
            if element.tag == _P:
                self._paragraph(element)
            else:
                self._flush_list()
                self._table(element)
        self._flush_list()

    def _style(self, ppr: Any) -> _StyleInfo:
        """The style of a paragraph with properties `ppr` (an unknown id: the default)."""
        element = ppr.find(f"{_W}pStyle") if ppr is not None else None
        style_id = element.get(_VAL) if element is not None else None
        if style_id not in self.style_infos:
            style = self.styles.get(style_id or "", self.default_style)
            self.style_infos[style_id] = _style_info(style)
        return self.style_infos[style_id]

    def _paragraph(self, paragraph: Any) -> None:
        ppr = paragraph.find(_PPR)
        info = self._style(ppr)
        direct_level = _outline_level(ppr) if ppr is not None else None
        level = info.level if direct_level is None else direct_level
        text, breaks = _collapse(*_paragraph_pieces(paragraph))
        if info.break_before or (ppr is not None and _is_on(ppr.find(f"{_W}pageBreakBefore"))):
            breaks.insert(0, ("before", 0))
        if ppr is not None and ppr.find(_SECT_PR) is not None and next(self.section_breaks, True):
            breaks.append(("explicit", len(text)))
        if not text or info.is_contents:
            self.pages.place(self.builder.next_start(), 0, breaks)  # nothing to show
            return
        if level is None and (info.is_list or _numbered(ppr)):
            self._list_item(text, breaks)
            return
        self._flush_list()
        self.pages.place(self.builder.next_start(), len(text), breaks)
        if level is None:
            self.builder.add("paragraph", text)
        elif self.builder.heading(level, text) and level == 0 and self.title_paragraph is None:
            self.title_paragraph = text

    def _list_item(self, text: str, breaks: Breaks) -> None:
        if not self.list_items:
            self.list_start = self.builder.next_start()
        self.pages.place(self.list_start, len(text), breaks)
        self.list_items.append(text)
        self.list_start += len(text) + len(ROW_SEPARATOR)

    def _flush_list(self) -> None:
        self.builder.add("list", ROW_SEPARATOR.join(self.list_items))
        self.list_items.clear()

    def _table(self, table: Any) -> None:
        rows: list[RowCells] = []
        offset = self.builder.next_start()
        for row in table.iterfind(_TR):
            cells, breaks = _row_cells(row)
            line, _ = row_line(cells.cells)
            self.pages.place(offset, len(line), breaks)
            if line:
                rows.append(cells)
                offset += len(line) + len(ROW_SEPARATOR)
        if len(rows) > 1 and not any(row.header for row in rows) and _styles_first_row(table):
            rows[0] = replace(rows[0], header=True)
        self.builder.add_table(rows)


def _styles_first_row(table: Any) -> bool:
    """Whether a `w:tbl` sets its first row apart as a header: its `w:tblLook` turns
    on the table style's first-row formatting (`w:firstRow`, or bit 0x0020 of the
    older hexadecimal `w:val`), as Word does for a new table."""
    look = table.find(f"{_W}tblPr/{_W}tblLook")
    if look is None:
        return False
    first_row = look.get(f"{_W}firstRow")
    if first_row is not None:
        return first_row.lower() not in _FALSE
    try:
        return bool(int(look.get(_VAL, "0"), 16) & _LOOK_FIRST_ROW)
    except ValueError:
        return False


def _row_cells(row: Any) -> tuple[RowCells, Breaks]:
    """A `w:tr` as its cells' texts (a header row when it repeats as the table's
    header, `w:tblHeader`; merged when a cell spans columns, `w:gridSpan`, or rows,
    `w:vMerge`), and its page breaks, all at the row's start. Its line is
    `row_line` of the cells, as HTML rows are.

    A cell that a vertically merged cell above covers is left out, as HTML leaves
    out cells a `rowspan` covers; a nested table's text stays inside its cell.
    """
    cells: list[str] = []
    breaks: Breaks = []
    merged = False
    for cell in row.iterfind(_TC):
        merge = cell.find(f"{_W}tcPr/{_W}vMerge")
        span = cell.find(f"{_W}tcPr/{_W}gridSpan")
        merged = merged or merge is not None or (span is not None and span.get(_VAL) != "1")
        if merge is not None and merge.get(_VAL, "continue") == "continue":
            continue
        texts: list[str] = []
        for paragraph in cell.iter(_P):
            raw, found = _paragraph_pieces(paragraph)
            texts.append(raw)
            breaks.extend((kind, 0) for kind, _ in found)
        cells.append(collapse_whitespace(" ".join(texts)))
    header = row.find(f"{_W}trPr/{_W}tblHeader")
    repeats = header is not None and header.get(_VAL, "true") not in ("0", "false")
    return RowCells(cells, repeats, merged), breaks


def _open(raw: bytes) -> WordDocument:
    """Open checked DOCX bytes with python-docx."""
    # Imported here: python-docx takes ~70 ms to import; only DOCX files need it.
    import docx

    return docx.Document(io.BytesIO(raw))


def _metadata(document: WordDocument) -> tuple[str, str]:
    """The title and language a document's core properties give ("" where unset).

    python-docx invents core properties ("Word Document") for a file without them;
    those are not read.
    """
    from docx.opc.constants import RELATIONSHIP_TYPE

    try:
        document.part.package.part_related_by(RELATIONSHIP_TYPE.CORE_PROPERTIES)
    except KeyError:
        return "", ""
    properties = document.core_properties
    return collapse_whitespace(properties.title or ""), (properties.language or "").strip()


def _read(document: WordDocument) -> _DocxReader:
    """Walk the body of an opened document."""
    from docx.enum.style import WD_STYLE_TYPE

    styles = document.styles
    reader = _DocxReader(
        styles={style.style_id: style for style in styles if style.type == WD_STYLE_TYPE.PARAGRAPH},
        default_style=styles.default(WD_STYLE_TYPE.PARAGRAPH),
    )
    body = document.element.find(_BODY)
    if body is not None:
        reader.read(body)
    return reader


_CORRUPT = (
    AttributeError,
    TypeError,
    zipfile.BadZipFile,
    zlib.error,
    EOFError,
    KeyError,
    ValueError,
    NotImplementedError,
    etree.LxmlError,
)
"""What python-docx and zipfile raise on a damaged package: a missing part, bad XML,
bad compressed data, an unsupported compression method, well-formed XML that lacks
what python-docx reads (a part's root element of another name or namespace, a
relationship without its target: AttributeError, TypeError)."""

MALFORMED_PART = (
    "a package part lacks what DOCX requires (a root element of another name or "
    "namespace, a missing attribute)"
)
"""The cause given for python-docx's AttributeError and TypeError."""


def _describe(exc: Exception) -> str:
    """An exception's message without KeyError's quotes, `MALFORMED_PART` for
    python-docx's AttributeError and TypeError, or the exception's class name."""
    if isinstance(exc, AttributeError | TypeError):
        return MALFORMED_PART
    if isinstance(exc, KeyError) and exc.args:
        return str(exc.args[0])
    return str(exc) or type(exc).__name__


def parse_docx(raw: bytes, path: str) -> ParsedDocument:
    """Parse a DOCX file into blocks of clean text and the canonical text they make.

    `check_docx_archive` runs first. Then the body is read in document order (also
    inside content controls, except a table of contents): a paragraph whose style is
    "Title" (level 0), "Heading N" (level N) or has an outline level (its own or its
    style's) is a "heading" block that sets the section path by level; a paragraph
    with a "List..." style or list numbering joins the "list" block of its run of
    consecutive list paragraphs (items joined by "\\n"); other paragraphs are
    "paragraph" blocks; a table is one "table" block (rows joined by "\\n", cells by
    " | ", merged cells once). Inside a block, whitespace runs become one space.
    Deleted text, field codes, hidden runs, headers, footers, footnotes, comments and
    text boxes are not read. Empty paragraphs and table-of-contents lines ("TOC N"
    styles) give no block and do not end a list.

    Layout: where Word saved its last page layout (`w:lastRenderedPageBreak`), the
    pages start there (inside a paragraph at the right character); else at hard page
    breaks (`w:br w:type="page"`, section breaks, `w:pageBreakBefore`); a break in a
    table starts the page at its row. No break saved: layout None.

    Title: the core properties' title, else the first "Title" paragraph, else the
    first heading, else the file stem. Language: the core properties' language, else
    "en". Raises `IngestError(path, "corrupt DOCX: ...")` on damaged content.
    O(size of the document XML).
    """
    check_docx_archive(raw, path)
    try:
        document = _open(raw)
        title, language = _metadata(document)
        reader = _read(document)
    except _CORRUPT as exc:
        raise IngestError(path, f"corrupt DOCX: {_describe(exc)}") from None
    builder = reader.builder
    title = title or reader.title_paragraph or builder.first_heading() or PurePath(path).stem
    return builder.build(
        title=title,
        format="docx",
        layout=reader.pages.layout(),
        language=language or "en",
    )
