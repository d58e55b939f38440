"""PDF pages for the source viewer: page geometry, PNG rendering (cached) and the
quote boxes mapped onto the rendered page.

Every PDFium call holds the process's PDFium lock (`pdfium_lock`).
"""

from __future__ import annotations

import io
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, cast
from urllib.parse import quote as url_quote
from urllib.parse import urlencode

from quoteproof.model import Box, Document
from quoteproof.pdfium_lock import pdfium
from quoteproof.store.base import Store

PAGE_SCALE = 1.5
"""Page images are rendered at 1.5 pixels per PDF point (108 dpi)."""
MAX_CACHED_PAGES = 64


@dataclass(frozen=True)
class PageGeometry:
    """A PDF page as rendered: its crop box (PDF points, origin bottom-left) and
    rotation (degrees clockwise, as PDFium applies it when rendering)."""

    left: float
    bottom: float
    width: float
    height: float
    rotation: int = 0

    @property
    def view_size(self) -> tuple[float, float]:
        """Width and height of the rendered page, in points."""
        if self.rotation in (90, 270):
            return self.height, self.width
        return self.width, self.height

    def rect(self, box: Box) -> tuple[float, float, float, float]:
        """`box` as (x, y, width, height) in the rendered page's points, origin
        top-left (the SVG overlay's `viewBox` coordinates)."""
        width, height = self.width, self.height
        u0, u1 = box.x0 - self.left, box.x1 - self.left
        top = self.bottom + height
        v0, v1 = top - box.y1, top - box.y0
        if self.rotation == 90:
            return height - v1, u0, v1 - v0, u1 - u0
        if self.rotation == 180:
            return width - u1, height - v1, u1 - u0, v1 - v0
        if self.rotation == 270:
            return v0, width - u1, v1 - v0, u1 - u0
        return u0, v0, u1 - u0, v1 - v0


_cache_lock = threading.Lock()
_png_cache: OrderedDict[tuple[str, int, int], bytes] = OrderedDict()
_geometry_cache: OrderedDict[tuple[str, int], tuple[PageGeometry, ...]] = OrderedDict()


def _cached(cache: OrderedDict[Any, Any], key: Any, make: Callable[[], Any]) -> Any:
    with _cache_lock:
        if key in cache:
            cache.move_to_end(key)
            return cache[key]
    value = make()
    with _cache_lock:
        cache[key] = value
        while len(cache) > MAX_CACHED_PAGES:
            cache.popitem(last=False)
    return value


def _open_pdf(original: bytes) -> Any:
    import pypdfium2 as pdfium  # type: ignore[import-untyped]

    return pdfium.PdfDocument(original)


def page_geometry(store: Store, document: Document) -> tuple[PageGeometry, ...] | None:
    """The geometry of every page of a stored PDF (cached), or None when the original
    is not stored or cannot be opened."""
    original = store.get_original(document.doc_id, document.version)
    if original is None:
        return None

    def read() -> tuple[PageGeometry, ...] | None:
        with pdfium():
            try:
                pdf = _open_pdf(original)
            except Exception:  # an unreadable original: no page view
                return None
            try:
                pages = []
                for number in range(len(pdf)):
                    page = pdf[number]
                    left, bottom, right, top = page.get_cropbox()
                    rotation = int(page.get_rotation()) % 360
                    pages.append(PageGeometry(left, bottom, right - left, top - bottom, rotation))
                    page.close()
                return tuple(pages)
            finally:
                pdf.close()

    key = (document.doc_id, document.version)
    result: tuple[PageGeometry, ...] | None = _cached(_geometry_cache, key, read)
    return result


def render_page_png(store: Store, document: Document, page_number: int) -> bytes | None:
    """PNG of page `page_number` (1-based) of a stored PDF at `PAGE_SCALE` (cached per
    document version and page), or None when there is no such page."""
    original = store.get_original(document.doc_id, document.version)
    if original is None:
        return None

    def render() -> bytes | None:
        with pdfium():
            pdf = _open_pdf(original)
            try:
                if not 1 <= page_number <= len(pdf):
                    return None
                page = pdf[page_number - 1]
                try:
                    image = page.render(scale=PAGE_SCALE).to_pil()
                finally:
                    page.close()
            finally:
                pdf.close()
        buffer = io.BytesIO()
        image.save(buffer, format="PNG", optimize=False)
        return buffer.getvalue()

    key = (document.doc_id, document.version, page_number)
    png: bytes | None = _cached(_png_cache, key, render)
    return png


@dataclass(frozen=True)
class PageView:
    number: int
    src: str
    width_px: int
    height_px: int
    view_box: str
    rects: tuple[tuple[str, str, str, str], ...]
    anchor: bool


def _fmt(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def page_views(
    document: Document,
    geometry: tuple[PageGeometry, ...],
    pages: tuple[int, ...],
    boxes: tuple[Box, ...],
) -> list[PageView]:
    views = []
    anchored = False
    version = urlencode({"version": document.version})
    doc = url_quote(document.doc_id, safe="")
    for number in pages:
        if not 1 <= number <= len(geometry):
            continue
        geom = geometry[number - 1]
        width, height = geom.view_size
        rects = tuple(tuple(_fmt(v) for v in geom.rect(box)) for box in boxes if box.page == number)
        anchor = bool(rects) and not anchored
        anchored = anchored or anchor
        views.append(
            PageView(
                number=number,
                src=f"/sources/{doc}/pages/{number}.png?{version}",
                width_px=round(width * PAGE_SCALE),
                height_px=round(height * PAGE_SCALE),
                view_box=f"0 0 {_fmt(width)} {_fmt(height)}",
                rects=cast(tuple[tuple[str, str, str, str], ...], rects),
                anchor=anchor,
            )
        )
    if views and not anchored:
        views[0] = replace(views[0], anchor=True)
    return views
