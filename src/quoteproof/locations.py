"""Exact page rectangles of a quote in a PDF, read on demand from the stored bytes.

Ingest does not store character boxes (reading them costs a PDFium call per
character); it stores `Layout.char_runs`, which map canonical text back to PDFium
character indexes. When a quote needs highlighting, `quote_boxes` opens the PDF
bytes, reads the boxes of exactly the quote's characters and merges them into one
rectangle per line fragment.
"""

from __future__ import annotations

import bisect
import ctypes
from collections import OrderedDict
from collections.abc import Iterator

import pypdfium2 as pdfium  # type: ignore[import-untyped]
import pypdfium2.raw as pdfium_c  # type: ignore[import-untyped]

from quoteproof.closing import ClosedOnExit
from quoteproof.model import Box, Layout
from quoteproof.pdfium_lock import pdfium as pdfium_lock

MIN_SIZE = 0.01
"""Character boxes narrower or lower than this (points) are skipped: they mark nothing."""

_OPEN_PAGES = 8  # text pages a reader keeps open at most (least recently used closed first)


def char_ranges(layout: Layout, start: int, end: int) -> Iterator[tuple[int, int, int]]:
    """Yield (page, first PDFium char, char count) for canonical span [start, end), in
    canonical order; characters in no run (generated ones) are left out.

    O(log r + k) for r runs, k of them overlapping the span.
    """
    runs = layout.char_runs
    index = max(bisect.bisect_right(runs, start, key=lambda run: run.start) - 1, 0)
    for run in runs[index:]:
        if run.start >= end:
            break
        low, high = max(start, run.start), min(end, run.start + run.length)
        if low < high:
            yield run.page, run.char + (low - run.start), high - low


class PdfBoxReader(ClosedOnExit):
    """Reads quote boxes from one PDF's bytes, keeping the document open between quotes.

    Use as a context manager (or call `close`); the few most recently used text
    pages stay open too. PDFium calls hold the process's PDFium lock, but one reader
    must not be used by two threads at once (its page cache is not shared safely).
    """

    def __init__(self, pdf: bytes) -> None:
        """Open `pdf`; raise ValueError if PDFium cannot open it."""
        try:
            with pdfium_lock():
                self._document = pdfium.PdfDocument(pdf)
        except pdfium.PdfiumError as exc:
            raise ValueError(f"cannot open PDF: {exc}") from None
        self._pages: OrderedDict[int, tuple[pdfium.PdfPage, pdfium.PdfTextPage]] = OrderedDict()
        self._rect = pdfium_c.FS_RECTF()
        self._rect_ref = ctypes.byref(self._rect)

    def close(self) -> None:
        """Close the open pages and the document; the reader is unusable afterwards."""
        with pdfium_lock():
            while self._pages:
                _, (page, textpage) = self._pages.popitem()
                textpage.close()
                page.close()
            self._document.close()

    def _textpage(self, page: int) -> pdfium.PdfTextPage:
        if page in self._pages:
            self._pages.move_to_end(page)
            return self._pages[page][1]
        if len(self._pages) >= _OPEN_PAGES:
            _, (old_page, old_textpage) = self._pages.popitem(last=False)
            old_textpage.close()
            old_page.close()
        pdf_page = self._document[page - 1]
        textpage = pdf_page.get_textpage()
        self._pages[page] = (pdf_page, textpage)
        return textpage

    def boxes(self, layout: Layout, start: int, end: int) -> tuple[Box, ...]:
        """The rectangles covering canonical text [start, end); see `quote_boxes`.
        Holds the process's PDFium lock while it reads."""
        with pdfium_lock():
            return self._boxes(layout, start, end)

    def _boxes(self, layout: Layout, start: int, end: int) -> tuple[Box, ...]:
        found: list[Box] = []
        current: list[float] | None = None  # x0, y0, x1, y1 of the open fragment
        current_page = 0
        for page, first, count in char_ranges(layout, start, end):
            textpage = self._textpage(page)
            for index in range(first, first + count):
                box = self._char_box(textpage, index)
                if box is None:
                    continue
                if current is not None and page == current_page and _same_line(current, box):
                    current[0], current[1] = min(current[0], box[0]), min(current[1], box[1])
                    current[2], current[3] = max(current[2], box[2]), max(current[3], box[3])
                    continue
                if current is not None:
                    found.append(Box(current_page, *current))
                current, current_page = list(box), page
        if current is not None:
            found.append(Box(current_page, *current))
        return tuple(found)

    def _char_box(self, textpage: pdfium.PdfTextPage, index: int) -> tuple[float, ...] | None:
        """The loose box of one character; None for whitespace and empty boxes."""
        raw = textpage.raw
        code = int(pdfium_c.FPDFText_GetUnicode(raw, index))
        if code == 0 or chr(code).isspace():
            return None
        if not pdfium_c.FPDFText_GetLooseCharBox(raw, index, self._rect_ref):
            return None
        rect = self._rect
        if rect.right - rect.left < MIN_SIZE or rect.top - rect.bottom < MIN_SIZE:
            return None
        return (rect.left, rect.bottom, rect.right, rect.top)


def _same_line(fragment: list[float], box: tuple[float, ...]) -> bool:
    """Whether a character box continues a line fragment: it overlaps the fragment's
    height by at least half of the lower of the two, and starts neither left of the
    fragment nor more than three heights right of its end."""
    overlap = min(fragment[3], box[3]) - max(fragment[1], box[1])
    height = min(fragment[3] - fragment[1], box[3] - box[1])
    if overlap < 0.5 * height:
        return False
    return fragment[0] - 1.0 <= box[0] <= fragment[2] + 3 * height


def quote_boxes(pdf: bytes, layout: Layout, start: int, end: int) -> tuple[Box, ...]:
    """Return the rectangles that cover canonical text [start, end) of a PDF's pages.

    `pdf` is the document's stored bytes and `layout` the layout its ingest produced.
    The span's characters are mapped through `layout.char_runs` to (page, PDFium
    character); characters in no run (joins, generated separators, OCR text) have no
    box. Each character's loose box (`FPDFText_GetLooseCharBox`: font ascent to
    descent) is read; whitespace and empty boxes are skipped; consecutive characters
    on the same page and line merge into one rectangle per line fragment. Boxes are
    in reading order (canonical order), in PDF points with the origin bottom-left,
    on 1-based pages. An empty span, or one of generated characters only, gives ().
    Raises ValueError if PDFium cannot open `pdf`. Cost: one document open plus two
    PDFium calls per character; use a `PdfBoxReader` for several quotes.
    """
    with PdfBoxReader(pdf) as reader:
        return reader.boxes(layout, start, end)
