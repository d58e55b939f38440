"""Reading one PDF page with PDFium: its text lines with geometry, and its rulings.

Everything here is one pass over a page with a bounded number of PDFium calls per
line (never per character on the normal path): the page text comes from one
`FPDFText_GetText` call, each line costs up to seven calls (two loose character
boxes, the font size and matrix of one character, two font weights, one fill
colour), and each page object one or two (its type; the bounds of a path). The
per-line and per-object calls go through the unchecked entry points of `calls`.
"""

from __future__ import annotations

import ctypes
import itertools
import math
from collections import Counter
from dataclasses import dataclass, replace

import pypdfium2 as pdfium  # type: ignore[import-untyped]
import pypdfium2.raw as pdfium_c  # type: ignore[import-untyped]

from quoteproof.ingest.pdf import calls as pdfium_calls
from quoteproof.ingest.pdf.rules import rule_stacks
from quoteproof.ingest.pdf.tables import Edge, TableGrid, find_grids

BBox = tuple[float, float, float, float]
"""A rectangle in PDF points: (x0, y0, x1, y1), origin bottom-left."""

_LINE_BREAK = "\r\n"
HYPHEN_MARKS = ("\ufffe", "\x02")
"""What PDFium puts in place of a hyphen it found at a line end (`FPDFText_GetText`
gives U+FFFE, `FPDFText_GetUnicode` U+0002); it then continues the next line on the
same text line, without a line break."""
FAR_JOIN = 2.0
"""Line heights between the characters a hyphen mark joins beyond which they are on
lines that do not follow one another (`_far_joins`)."""
_BOLD_WEIGHT = 600
_BOLD_NAME_MARKS = ("bold", "black", "heavy", "semibold", "demi")
_BULLETS = frozenset("•◦▪▫■□●○‣⁃∙·-–—*›»➢➤✓✔")
_RULE_THICKNESS = 2.5  # a path thinner than this is a ruling line
_RULE_MIN_LENGTH = 4.0
_SEGMENT_BUDGET = 300  # most path segments read per page (vector drawings can be huge)
_MAX_TABLE_SHARE = 0.85  # a "table" covering more of the page is a frame or background
_PICTURE_TYPES = (pdfium_c.FPDF_PAGEOBJ_IMAGE, pdfium_c.FPDF_PAGEOBJ_FORM)
_MIN_WALKED_SIZE = 30.0  # smaller many-segment paths are icons and glyphs, not grids
_RECT_SEGMENTS = 5  # a path of at most this many segments and a non-thin box is a rectangle


@dataclass(frozen=True, slots=True)
class PdfLine:
    """One line of text on page `page` (1-based).

    `text` is the line exactly as PDFium gives it (without its "\\r\\n"); its
    character `k` is PDFium character `char + k` of the page, or has no PDFium
    character when `char` is None (text read by OCR). The box, in PDF points, spans
    the loose boxes of the first and last non-space characters (`read_lines` gives
    it in PDF user space, `upright_lines` in the page's display orientation); `size`
    is the font size in points (text matrix applied) of a character near the
    middle. For a line
    that may be a heading (at most 200 characters and 40 words, no final period)
    `bold` says whether its first and last words are bold and `color` is the fill
    colour (0xRRGGBB) of its first word (None where a colour other than the page's
    main one is not shared by the last character); other lines have False and None.
    """

    page: int
    char: int | None
    text: str
    x0: float = 0.0
    y0: float = 0.0
    x1: float = 0.0
    y1: float = 0.0
    size: float = 0.0
    bold: bool = False
    color: int | None = None


def upright(box: BBox, rotation: int, page_box: BBox) -> BBox:
    """`box` (PDF user space) in the page's display orientation: its /Rotate (0, 90,
    180 or 270 degrees clockwise) applied, origin at the shown page's bottom-left."""
    left, bottom, right, top = page_box
    x0, y0, x1, y1 = box
    if rotation == 90:
        return (y0 - bottom, right - x1, y1 - bottom, right - x0)
    if rotation == 180:
        return (right - x1, top - y1, right - x0, top - y0)
    if rotation == 270:
        return (top - y1, x0 - left, top - y0, x1 - left)
    return box


def upright_lines(lines: tuple[PdfLine, ...], rotation: int, page_box: BBox) -> tuple[PdfLine, ...]:
    """`lines` with their boxes turned `upright` (unchanged for an unrotated page)."""
    if rotation not in (90, 180, 270):
        return lines
    turned: list[PdfLine] = []
    for line in lines:
        x0, y0, x1, y1 = upright((line.x0, line.y0, line.x1, line.y1), rotation, page_box)
        turned.append(replace(line, x0=x0, y0=y0, x1=x1, y1=y1))
    return tuple(turned)


def page_text(textpage: pdfium.PdfTextPage) -> str:
    """Return the page's text so that character `i` is PDFium character `i`.

    One `FPDFText_GetText` call normally does it. When PDFium's text and character
    list differ in length (characters it leaves out of the text, or characters
    outside the BMP), the text is read character by character instead, with a NUL
    standing for each character PDFium leaves out.
    """
    raw = textpage.raw
    count = int(pdfium_c.FPDFText_CountChars(raw))
    if count <= 0:
        return ""
    buffer = (ctypes.c_ushort * (count + 1))()
    written = int(pdfium_c.FPDFText_GetText(raw, 0, count, buffer))
    data = ctypes.string_at(buffer, 2 * max(written - 1, 0))
    text = data.decode("utf-16-le", errors="surrogatepass")
    if len(text) == count:
        return text
    return _text_by_char(raw, count)


def _text_by_char(raw: object, count: int) -> str:
    chars: list[str] = []
    for index in range(count):
        code = int(pdfium_c.FPDFText_GetUnicode(raw, index))
        left_out = int(pdfium_c.FPDFText_GetTextIndexFromCharIndex(raw, index)) < 0
        valid = 0 < code < 0x110000 and not 0xD800 <= code < 0xE000
        chars.append(chr(code) if valid and not left_out else "\x00")
    return "".join(chars)


class _LineReader:
    """Measures lines of one text page; out-parameters and PDFium functions bound once
    (the unchecked ones of `calls`, given the page as a void pointer)."""

    def __init__(self, textpage: pdfium.PdfTextPage) -> None:
        self.textpage = textpage.raw
        self.raw = pdfium_calls.handle(textpage.raw)
        self.rect = pdfium_c.FS_RECTF()
        self.rect_ref = ctypes.byref(self.rect)
        self.matrix = pdfium_c.FS_MATRIX()
        self.matrix_ref = ctypes.byref(self.matrix)
        self.rgba = [ctypes.c_uint() for _ in range(4)]
        self.rgba_refs = [ctypes.byref(value) for value in self.rgba]
        self.name = ctypes.create_string_buffer(128)
        self.flags_ref = ctypes.byref(ctypes.c_int())
        self.loose_box = pdfium_calls.loose_char_box
        self.weight = pdfium_calls.font_weight
        self.fill = pdfium_calls.fill_color
        self.size_of = pdfium_calls.font_size
        self.matrix_of = pdfium_calls.char_matrix

    def is_bold(self, index: int) -> bool:
        weight = int(self.weight(self.raw, index))
        if weight > 0:
            return weight >= _BOLD_WEIGHT
        found = pdfium_c.FPDFText_GetFontInfo(self.textpage, index, self.name, 128, self.flags_ref)
        name = self.name.value.decode("latin-1").lower() if found else ""
        return any(mark in name for mark in _BOLD_NAME_MARKS)

    def font_size(self, index: int) -> float:
        """Font size of character `index` in points, its text and form matrices applied."""
        size = float(self.size_of(self.raw, index))
        if self.matrix_of(self.raw, index, self.matrix_ref):
            return size * math.hypot(self.matrix.c, self.matrix.d)
        return size

    def fill_color(self, index: int) -> int | None:
        if not self.fill(self.raw, index, *self.rgba_refs):
            return None
        red, green, blue = self.rgba[0].value, self.rgba[1].value, self.rgba[2].value
        return int((red << 16) | (green << 8) | blue)

    def box(self, first: int, last: int) -> BBox:
        """The union of the loose boxes of characters `first` and `last`."""
        rect, raw, loose_box, ref = self.rect, self.raw, self.loose_box, self.rect_ref
        if not loose_box(raw, first, ref):
            return (0.0, 0.0, 0.0, 0.0)
        x0, y0, x1, y1 = rect.left, rect.bottom, rect.right, rect.top
        if first != last and loose_box(raw, last, ref):
            x0, y0 = min(x0, rect.left), min(y0, rect.bottom)
            x1, y1 = max(x1, rect.right), max(y1, rect.top)
        return (x0, y0, x1, y1)

    def line(self, page: int, text: str, start: int) -> PdfLine | None:
        """Build the `PdfLine` for `text` (PDFium characters from `start`); None if blank.

        Weight and colour are read only for a line that may be (part of) a heading:
        at most 200 characters and 40 words, no final period.
        """
        stripped = text.strip()
        if not stripped:
            return None
        first = text.find(stripped[0])  # everything before it is whitespace
        last = first + len(stripped) - 1
        middle = first + (last - first) // 2
        while text[middle].isspace():
            middle += 1
        x0, y0, x1, y1 = self.box(start + first, start + last)
        bold = False
        color = None
        if len(stripped) <= 200 and stripped[-1] != "." and stripped.count(" ") < 40:
            word = first + 1 if stripped[0] in _BULLETS and last > first else first
            while word < last and text[word].isspace():
                word += 1
            bold = self.is_bold(start + word) and self.is_bold(start + last)
            color = self.fill_color(start + word)
        size = self.font_size(start + middle)
        return PdfLine(page, start, text, x0, y0, x1, y1, size, bold, color)


def read_lines(textpage: pdfium.PdfTextPage, page: int) -> tuple[PdfLine, ...]:
    """Return the non-blank lines of a page, in PDFium's order (its "\\r\\n" breaks,
    and its hyphen joins to a line far away: `_far_joins`)."""
    text = page_text(textpage)
    reader = _LineReader(textpage)
    lines: list[PdfLine] = []
    position = 0
    for piece in text.split(_LINE_BREAK):
        cuts = [0, *_far_joins(reader, piece, position), len(piece)]
        for start, end in itertools.pairwise(cuts):
            line = reader.line(page, piece[start:end], position + start)
            if line is not None:
                lines.append(line)
        position += len(piece) + len(_LINE_BREAK)
    _check_colors(lines, reader)
    return tuple(lines)


def _far_joins(reader: _LineReader, piece: str, start: int) -> list[int]:
    """Where in `piece` (PDFium characters from `start`) a hyphen mark joins a line to
    one that does not follow it: the characters on either side of the mark stand more
    than FAR_JOIN line heights apart vertically (a word hyphenated at a column's
    foot joined to the page's footer, "Soekarno-VerDate Sep<11>2014 ..."). Each cut
    is just after its mark, which stays at the end of the first line."""
    cuts = []
    for index, char in enumerate(piece):
        if char not in HYPHEN_MARKS or not 0 < index < len(piece) - 1:
            continue
        _, before_bottom, _, before_top = reader.box(start + index - 1, start + index - 1)
        _, after_bottom, _, after_top = reader.box(start + index + 1, start + index + 1)
        height = max(before_top - before_bottom, after_top - after_bottom, 1.0)
        if abs(before_bottom - after_bottom) > FAR_JOIN * height:
            cuts.append(index + 1)
    return cuts


def _check_colors(lines: list[PdfLine], reader: _LineReader) -> None:
    """Keep a line's colour only where its last character shares it.

    Lines in the page's main text colour are not checked (one PDFium call saved per
    line): only a colour that stands out matters to heading detection.
    """
    weights: Counter[int] = Counter()
    for line in lines:
        if line.color is not None:
            weights[line.color] += len(line.text)
    if not weights:
        return
    main = weights.most_common(1)[0][0]
    for index, line in enumerate(lines):
        if line.color is None or line.color == main or line.char is None:
            continue
        last = line.char + len(line.text.rstrip()) - 1
        if reader.fill_color(last) != line.color:
            lines[index] = replace(line, color=None)


class _RulingReader:
    """Collects the ruling edges of one page's path objects; ctypes out-parameters and
    PDFium functions bound once (allocating them per call costs more than the call)."""

    def __init__(self) -> None:
        self.horizontal: list[Edge] = []
        self.vertical: list[Edge] = []
        self.budget = _SEGMENT_BUDGET
        self.floats = [ctypes.c_float() for _ in range(4)]
        self.refs = [ctypes.byref(value) for value in self.floats]
        self.matrix = pdfium_c.FS_MATRIX()
        self.matrix_ref = ctypes.byref(self.matrix)

    def bounds(self, obj: object) -> BBox | None:
        if not pdfium_c.FPDFPageObj_GetBounds(obj, *self.refs):
            return None
        left, bottom, right, top = self.floats
        return (left.value, bottom.value, right.value, top.value)

    def add_path(self, obj: object, bounds: BBox) -> None:
        """Add the rulings one path draws.

        A thin path is one ruling; a path of few segments with a real area is a
        rectangle (its four sides); other paths at least `_MIN_WALKED_SIZE` on each
        side (a grid or frame, not an icon) are walked segment by segment (up to
        `_SEGMENT_BUDGET` segments a page), keeping straight horizontal and vertical
        pieces.
        """
        x0, y0, x1, y1 = bounds
        width, height = x1 - x0, y1 - y0
        if height <= _RULE_THICKNESS and width >= _RULE_MIN_LENGTH:
            self.horizontal.append(((y0 + y1) / 2, x0, x1))
            return
        if width <= _RULE_THICKNESS and height >= _RULE_MIN_LENGTH:
            self.vertical.append(((x0 + x1) / 2, y0, y1))
            return
        if width < _RULE_MIN_LENGTH or height < _RULE_MIN_LENGTH:
            return
        segments = int(pdfium_c.FPDFPath_CountSegments(obj))
        if segments <= 2:
            return  # a single diagonal stroke
        if segments <= _RECT_SEGMENTS:
            self.horizontal += [(y0, x0, x1), (y1, x0, x1)]
            self.vertical += [(x0, y0, y1), (x1, y0, y1)]
        elif segments <= self.budget and min(width, height) >= _MIN_WALKED_SIZE:
            self.budget -= segments
            self._walk(obj, segments)

    def _walk(self, obj: object, segments: int) -> None:
        matrix = self.matrix
        if not pdfium_c.FPDFPageObj_GetMatrix(obj, self.matrix_ref):
            return
        a, b, c, d, e, f = matrix.a, matrix.b, matrix.c, matrix.d, matrix.e, matrix.f
        px, py = self.floats[0], self.floats[1]
        start = current = (0.0, 0.0)
        for index in range(segments):
            segment = pdfium_c.FPDFPath_GetPathSegment(obj, index)
            if not segment or not pdfium_c.FPDFPathSegment_GetPoint(segment, *self.refs[:2]):
                continue
            point = (a * px.value + c * py.value + e, b * px.value + d * py.value + f)
            kind = int(pdfium_c.FPDFPathSegment_GetType(segment))
            if kind == pdfium_c.FPDF_SEGMENT_MOVETO:
                start = point
            elif kind == pdfium_c.FPDF_SEGMENT_LINETO:
                self._add_edge(current, point)
            if pdfium_c.FPDFPathSegment_GetClose(segment):
                self._add_edge(point, start)
            current = point

    def _add_edge(self, p: tuple[float, float], q: tuple[float, float]) -> None:
        if abs(p[1] - q[1]) <= 1.0 and abs(p[0] - q[0]) >= _RULE_MIN_LENGTH:
            self.horizontal.append(((p[1] + q[1]) / 2, min(p[0], q[0]), max(p[0], q[0])))
        elif abs(p[0] - q[0]) <= 1.0 and abs(p[1] - q[1]) >= _RULE_MIN_LENGTH:
            self.vertical.append(((p[0] + q[0]) / 2, min(p[1], q[1]), max(p[1], q[1])))


def scan_objects(
    page: pdfium.PdfPage, page_box: BBox
) -> tuple[tuple[TableGrid, ...], tuple[TableGrid, ...], bool]:
    """Return the ruled tables on a page (PDF user space), the stacks of horizontal
    rules outside them that may rule a table without column rulings
    (`rules.rule_stacks`), and whether the page shows an image or form.

    Top-level page objects only (rulings inside form XObjects are not seen).
    Paths covering most of the page, and "tables" covering more than
    `_MAX_TABLE_SHARE` of it, are backgrounds or frames and are ignored.
    """
    raw = pdfium_calls.handle(page.raw)
    reader = _RulingReader()
    get_object, get_type = pdfium_calls.page_object, pdfium_calls.object_type
    void_pointer, path_type = ctypes.c_void_p, pdfium_c.FPDF_PAGEOBJ_PATH
    has_image = False
    page_area = max((page_box[2] - page_box[0]) * (page_box[3] - page_box[1]), 1.0)
    for index in range(int(pdfium_c.FPDFPage_CountObjects(page.raw))):
        address = get_object(raw, index)
        kind = get_type(void_pointer(address))
        if kind in _PICTURE_TYPES:
            has_image = True
        if kind != path_type:
            continue
        obj = ctypes.cast(address, pdfium_c.FPDF_PAGEOBJECT)
        bounds = reader.bounds(obj)
        if bounds is not None and (bounds[2] - bounds[0]) * (bounds[3] - bounds[1]) <= (
            _MAX_TABLE_SHARE * page_area
        ):
            reader.add_path(obj, bounds)
    tables = tuple(
        grid
        for grid in find_grids(reader.horizontal, reader.vertical)
        if (grid.box[2] - grid.box[0]) * (grid.box[3] - grid.box[1]) <= _MAX_TABLE_SHARE * page_area
    )
    stacks = tuple(
        stack
        for stack in rule_stacks(reader.horizontal, reader.vertical, [t.box for t in tables])
        if (stack.box[2] - stack.box[0]) * (stack.box[3] - stack.box[1])
        <= _MAX_TABLE_SHARE * page_area
    )
    return tables, stacks, has_image
