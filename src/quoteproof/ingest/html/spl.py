"""FDA SPL ingest: a Structured Product Labeling file (HL7 v3 XML) as a structured label.

Every `<section>` with a `<title>` is a heading; nested sections give the section
path ("5. WARNINGS AND PRECAUTIONS" > "5.1 Hypersensitivity ..."). A section's
`<text>` gives paragraph, list and table blocks. The canonical text is built (see
`quoteproof.ingest.blocks`): whitespace is collapsed inside every block.

Footnotes are numbered within their table (or their section's text): the place of
a footnote shows its mark, "[1]", and the footnotes follow the table (or the text) as
one paragraph block, a line each: "[1] Seizure (n=1), ...". A `<footnoteRef>` shows
the mark of the footnote it names. A superscript (`<sup>`) is joined to the text
before it ("VEKLURY®").

The XML is read without a DTD, network access or entity expansion.
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from lxml import etree

from quoteproof.errors import IngestError
from quoteproof.ingest.blocks import (
    ROW_SEPARATOR,
    BlockBuilder,
    RowCells,
    collapse_whitespace,
)
from quoteproof.model import ParsedDocument

SPL_NAMESPACE = "urn:hl7-org:v3"
"""The XML namespace of HL7 v3 documents (and so of SPL labels)."""

TITLE_MAX_CHARS = 120
"""A document `<title>` longer than this is shortened (see `parse_spl`)."""

TITLE_FIRST_LINE_MAX_CHARS = 80
"""Longest first title line that is kept after the product name in a shortened title."""

_V = f"{{{SPL_NAMESPACE}}}"
_SECTION, _TITLE, _TEXT = f"{_V}section", f"{_V}title", f"{_V}text"
_PARAGRAPH, _LIST, _ITEM = f"{_V}paragraph", f"{_V}list", f"{_V}item"
_TABLE, _CAPTION, _TR = f"{_V}table", f"{_V}caption", f"{_V}tr"
_BR, _FOOTNOTE, _FOOTNOTE_REF = f"{_V}br", f"{_V}footnote", f"{_V}footnoteRef"
_SUPERSCRIPTS = frozenset({f"{_V}sup", _FOOTNOTE, _FOOTNOTE_REF})
_MULTIMEDIA = f"{_V}renderMultiMedia"
_BLOCKS = frozenset({_PARAGRAPH, _LIST, _TABLE, _MULTIMEDIA})
_CELLS = frozenset({f"{_V}td", f"{_V}th"})
_THEAD, _TH = f"{_V}thead", f"{_V}th"
_SPANS = ("colspan", "rowspan")
_ROW_GROUPS = (_THEAD, f"{_V}tbody", f"{_V}tfoot")  # in the order they are shown
_UNSUPPORTED = "unsupported XML: only FDA SPL labels (HL7 v3 document) are supported"


def _parse_xml(raw: bytes, path: str) -> Any:
    """The root element of `raw`; `IngestError(path, "malformed XML: ...")` (libxml2's
    message) if not well-formed XML, nested deeper than 256 elements or amplifying
    entities beyond libxml2's limit."""
    parser = etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        remove_comments=True,
        remove_pis=True,
    )
    try:
        return etree.fromstring(raw, parser)
    except etree.XMLSyntaxError as exc:
        raise IngestError(path, f"malformed XML: {exc.msg or exc}") from None


@dataclass
class _Notes:
    """The footnotes of one table or one section's text, numbered from 1."""

    texts: list[str] = field(default_factory=list)

    def add(self, text: str) -> str:
        """Record a footnote's text; return its mark."""
        self.texts.append(text)
        return f"[{len(self.texts)}]"

    def block(self) -> str:
        """The footnotes as lines "[n] text" ("" if there are none)."""
        return ROW_SEPARATOR.join(
            f"[{number}] {text}" for number, text in enumerate(self.texts, start=1)
        )


def _append(parts: list[str], child: Any, text: str) -> None:
    """Add the text of inline `child` to `parts`: a superscript, a footnote mark or a
    footnote reference is joined to the text before it (whitespace between dropped)."""
    if child.tag in _SUPERSCRIPTS and text.strip():
        while parts and not parts[-1].strip():
            parts.pop()
        if parts:
            parts[-1] = parts[-1].rstrip()
    parts.append(text)


@dataclass
class _SplReader:
    """Walks the sections of an SPL document into blocks."""

    builder: BlockBuilder = field(default_factory=BlockBuilder)
    notes: list[_Notes] = field(default_factory=list)
    marks: dict[str, str] = field(default_factory=dict)  # footnote ID -> its mark
    line_break: str = " "  # what a <br/> gives

    def sections(self, parent: Any, level: int) -> None:
        """Read the `component/section` children of `parent` as sections of `level`."""
        for section in parent.iterfind(f"{_V}component/{_SECTION}"):
            self.section(section, level)

    def section(self, section: Any, level: int) -> None:
        """Read a section: its title, its text (then its footnotes), its subsections."""
        self.builder.close_sections(level)
        self.notes.append(_Notes())
        title = section.find(_TITLE)
        if title is not None:
            self.builder.heading(level, self.inline(title))
        text = section.find(_TEXT)
        if text is not None:
            self.flow(text)
        self.builder.add("paragraph", self.notes.pop().block())
        self.sections(section, level + 1)

    def flow(self, element: Any) -> None:
        """Read mixed content: block children become blocks, text between them paragraphs."""
        loose: list[str] = [element.text or ""]
        for child in element:
            if child.tag in _BLOCKS:
                self.builder.add("paragraph", collapse_whitespace("".join(loose)))
                loose.clear()
                self.block(child)
            else:
                _append(loose, child, self.piece(child))
            loose.append(child.tail or "")
        self.builder.add("paragraph", collapse_whitespace("".join(loose)))

    def block(self, element: Any) -> None:
        """Read a paragraph, list, table or image (only an image's caption is read)."""
        if element.tag == _PARAGRAPH:
            self.flow(element)
        elif element.tag == _LIST:
            self.builder.add("list", ROW_SEPARATOR.join(self.list_lines(element)))
        elif element.tag == _TABLE:
            self.table(element)
        else:
            caption = element.find(_CAPTION)
            if caption is not None:
                self.builder.add("paragraph", self.inline(caption))

    def list_lines(self, element: Any) -> list[str]:
        """One line per item of a `<list>`; a nested list's items follow their item's."""
        lines: list[str] = []
        for item in element.iterfind(_ITEM):
            nested = [child for child in item if child.tag == _LIST]
            own = [item.text or ""]
            for child in item:
                if child.tag != _LIST:
                    _append(own, child, self.piece(child))
                own.append(child.tail or "")
            text = collapse_whitespace("".join(own))
            lines.extend([text] if text else [])
            for sublist in nested:
                lines.extend(self.list_lines(sublist))
        return lines

    def table(self, table: Any) -> None:
        """A caption paragraph, the table as one block, then the table's footnotes."""
        self.notes.append(_Notes())
        caption = table.find(_CAPTION)
        if caption is not None:
            self.builder.add("paragraph", self.inline(caption))
        rows = [(row, False) for row in table.iterfind(_TR)]
        for group in _ROW_GROUPS:
            for part in table.iterfind(group):
                rows.extend((row, group == _THEAD) for row in part.iterfind(_TR))
        self.builder.add_table([self.row(row, header) for row, header in rows])
        self.builder.add("paragraph", self.notes.pop().block())

    def row(self, row: Any, header: bool) -> RowCells:
        """A `<tr>` as its cells' texts; a header row when in `<thead>` (`header`)
        or made of `<th>` cells only."""
        cells = [cell for cell in row if cell.tag in _CELLS]
        header = header or (bool(cells) and all(cell.tag == _TH for cell in cells))
        merged = any(
            cell.get(name, "1").strip() not in ("", "1") for cell in cells for name in _SPANS
        )
        return RowCells([self.inline(cell) for cell in cells], header, merged)

    def inline(self, element: Any) -> str:
        """The text of everything in `element` as one line, whitespace collapsed."""
        return collapse_whitespace(self.content(element))

    def content(self, element: Any) -> str:
        """The raw text of everything in `element` (see `piece` and `_append`)."""
        parts: list[str] = [element.text or ""]
        for child in element:
            _append(parts, child, self.piece(child))
            parts.append(child.tail or "")
        return "".join(parts)

    def piece(self, element: Any) -> str:
        """The raw text an inline element stands for (its tail excluded).

        `<br>` gives `line_break`, a footnote its mark (its text goes to the open
        notes), a footnote reference the mark it refers to; images, comments and
        unexpanded entities give nothing. Recursion depth is bounded by libxml2's
        nesting limit (256 elements without huge_tree).
        """
        tag = element.tag
        if tag == _BR:
            return self.line_break
        if tag == _FOOTNOTE:
            mark = self.notes[-1].add(self.inline(element)) if self.notes else ""
            self.marks.setdefault(element.get("ID", ""), mark)
            return mark
        if tag == _FOOTNOTE_REF:
            return self.marks.get(element.get("IDREF", ""), "")
        if tag == _MULTIMEDIA or not isinstance(tag, str):
            return ""
        return self.content(element)


def _title_lines(title: Any) -> list[str]:
    """The lines of a document `<title>` (split at `<br/>`), whitespace collapsed."""
    text = _SplReader(line_break="\n").content(title)
    lines = (collapse_whitespace(line) for line in text.split("\n"))
    return [line for line in lines if line]


def _product_name(root: Any) -> str:
    """The first product's name and generic name ("Veklury (remdesivir)"), or ""."""
    product = root.find(f".//{_V}manufacturedProduct/{_V}manufacturedProduct")
    if product is None:
        return ""
    name = collapse_whitespace(product.findtext(f"{_V}name") or "")
    generic = collapse_whitespace(
        product.findtext(f"{_V}asEntityWithGeneric/{_V}genericMedicine/{_V}name") or ""
    )
    if name and generic and generic.lower() != name.lower():
        return f"{name} ({generic.lower()})"
    return name or generic


def _document_title(root: Any) -> str:
    """A readable title for an SPL document ("" if it has none); see `parse_spl`."""
    element = root.find(_TITLE)
    lines = _title_lines(element) if element is not None else []
    full = " ".join(lines)
    if len(full) <= TITLE_MAX_CHARS:
        return full
    product = _product_name(root)
    if product:
        first = lines[0]
        return f"{product}: {first}" if len(first) <= TITLE_FIRST_LINE_MAX_CHARS else product
    cut = full[: TITLE_MAX_CHARS - 1].rsplit(" ", 1)[0]
    return cut.rstrip(string.punctuation + " ") + "…"


def parse_spl(raw: bytes, path: str) -> ParsedDocument:
    """Parse an FDA SPL label (HL7 v3 XML) into blocks and the canonical text they make.

    Reads `document/component/structuredBody`: each `<section>` (nested through
    `component`) with a non-empty `<title>` is a "heading" block whose level is the
    section's depth; a section without a title adds no heading, and its content lies
    under its enclosing sections. In a section's `<text>`: each `<paragraph>` (and
    text between blocks) is a "paragraph" block; a `<list>` is one "list" block
    (items joined by "\\n", nested items after theirs); a `<table>` is its caption
    ("paragraph"), one "table" block (thead, tbody, tfoot rows joined by "\\n", cells
    by " | ") and its footnotes ("paragraph"); an image gives its caption, if any.
    Product data elements, highlights (`<excerpt>`) and media are not read.

    Title: the document `<title>` with whitespace collapsed and its lines joined by
    spaces; if longer than `TITLE_MAX_CHARS`: "Product (generic): first title line"
    ("Veklury (remdesivir): FACT SHEET FOR HEALTHCARE PROVIDERS"), or just the
    product if that line is long, or the title cut at a word with "…" if the label
    names no product; no title: the first heading, else the file stem. Language:
    the document's `<languageCode code>`, else "en".

    Raises `IngestError(path, "malformed XML: ...")` for bytes that are not XML and
    `IngestError(path, "unsupported XML: only FDA SPL labels (HL7 v3 document) are
    supported")` for other XML. O(len(raw)).
    """
    root = _parse_xml(raw, path)
    if root.tag != f"{_V}document":
        raise IngestError(path, _UNSUPPORTED)
    reader = _SplReader()
    body = root.find(f"{_V}component/{_V}structuredBody")
    if body is not None:
        reader.sections(body, level=1)
    builder = reader.builder
    title = _document_title(root) or builder.first_heading() or PurePath(path).stem
    language = root.find(f"{_V}languageCode")
    code = collapse_whitespace(language.get("code", "")) if language is not None else ""
    return builder.build(title=title, format="spl", language=code or "en")
