"""PDF pages for the source viewer: page geometry, PNG rendering (cached) and the
quote boxes mapped onto the rendered page.

A page is rendered at `PAGE_SCALE` pixels per point, or at the smaller scale that
keeps its image within `MAX_PAGE_PIXELS` (`render_scale`): a PDF can declare a page
of 200 x 200 inches in a few bytes, and its image must not take gigabytes. The
highlight overlay is drawn in PDF points over the image, so it fits at any scale.
Rendered PNGs are cached, at most `MAX_CACHED_PAGES` of them and
`MAX_CACHED_PNG_BYTES` together.

PDFium runs in limited child processes (`limited_call`), never in the server's:
pages are rendered under `RENDER_LIMITS` (a page that needs more is not shown, and
that is remembered), at most `RENDER_SLOTS` at once and one at a time per document
version (`_Renderer`), so that no page, however costly, holds another document's;
a page asked for by many at once is rendered once. Page sizes are read likewise
(`GEOMETRY_LIMITS`).
"""

from __future__ import annotations

import io
import math
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, replace
from typing import Any, cast
from urllib.parse import quote as url_quote
from urllib.parse import urlencode

from quoteproof.limited_call import Failure, Finished, LimitedCall, Limits, Outcome
from quoteproof.model import Box, Document
from quoteproof.store.base import Store

PAGE_SCALE = 1.5
"""Page images are rendered at 1.5 pixels per PDF point (108 dpi), unless that would
exceed `MAX_PAGE_PIXELS`."""
MAX_PAGE_PIXELS = 4_000_000
"""The most pixels (width x height) of one page image: a US Letter or A4 page at
`PAGE_SCALE` has about 1.1 million; larger pages are rendered at a smaller scale."""
MAX_CACHED_PAGES = 64
"""The most page geometries, and the most page images, kept in memory."""
MAX_CACHED_PNG_BYTES = 64 * 1024 * 1024
"""The most bytes of page images kept in memory together."""
RENDER_LIMITS = Limits(memory_bytes=512 * 2**20, cpu_seconds=10, wall_seconds=30)
"""What rendering one page may cost (a page of a million strokes takes a minute)."""
GEOMETRY_LIMITS = Limits(memory_bytes=512 * 2**20, cpu_seconds=30, wall_seconds=60)
"""What reading the page sizes of one PDF may cost (each page is loaded)."""
RENDER_SLOTS = 2
"""Pages rendered at the same time, each in its own child process."""


def render_scale(width: float, height: float) -> float:
    """Pixels per point for a page of `width` x `height` points: `PAGE_SCALE`, or the
    largest scale at which its image (PDFium rounds each side up) has at most
    `MAX_PAGE_PIXELS` pixels."""
    if math.ceil(width * PAGE_SCALE) * math.ceil(height * PAGE_SCALE) <= MAX_PAGE_PIXELS:
        return PAGE_SCALE
    # (w·s + 1)(h·s + 1) <= MAX bounds ceil(w·s)·ceil(h·s): solve for s.
    area, sides = width * height, width + height
    return (math.sqrt(sides * sides + 4 * area * (MAX_PAGE_PIXELS - 1)) - sides) / (2 * area)


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

    @property
    def scale(self) -> float:
        """Pixels per point of the page's image (`render_scale`)."""
        return render_scale(self.width, self.height)

    @property
    def pixel_size(self) -> tuple[int, int]:
        """Width and height of the page's image, in pixels (as PDFium renders it)."""
        width, height = self.view_size
        return math.ceil(width * self.scale), math.ceil(height * self.scale)

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


class _Cache:
    """A thread-safe least-recently-used cache of at most `max_items` values whose
    `size`s add up to at most `max_size` (a value larger than that is not kept).

    A value is made once for callers that ask for it at the same time: the first
    makes it, the others wait for that one (a make that raises raises in each)."""

    def __init__(
        self, max_items: int, max_size: float = math.inf, size: Callable[[Any], int] = lambda _: 0
    ) -> None:
        self._items: OrderedDict[Any, Any] = OrderedDict()
        self._making: dict[Any, Future[Any]] = {}
        self._lock = threading.Lock()
        self._max_items, self._max_size, self._size = max_items, max_size, size
        self._total = 0

    def get(self, key: Any, make: Callable[[], Any]) -> Any:
        """The value of `key`, made by `make` (outside the lock) when not cached, or
        the one being made for another caller."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
            making = self._making.get(key)
            if making is None:
                self._making[key] = making = Future()
                maker = True
            else:
                maker = False
        if not maker:
            return making.result()
        try:
            value = make()
        except BaseException as exc:
            with self._lock:
                del self._making[key]
            making.set_exception(exc)
            raise
        with self._lock:
            self._keep(key, value)
            del self._making[key]
        making.set_result(value)
        return value

    def _keep(self, key: Any, value: Any) -> None:
        """Cache `value` unless too large, dropping the oldest beyond the bounds."""
        size = self._size(value)
        if size > self._max_size:
            return
        self._items[key] = value
        self._total += size
        while len(self._items) > self._max_items or self._total > self._max_size:
            _, dropped = self._items.popitem(last=False)
            self._total -= self._size(dropped)


class PageNotRendered(Exception):
    """A page whose rendering met its limits (`RENDER_LIMITS`); `str()` says which."""


class _Renderer:
    """Runs page renders in limited child processes: at most `slots` at once, and
    one at a time per document version, so that one document's costly pages take
    one slot and leave the others to other documents. `renders` counts the renders
    started (for monitoring)."""

    def __init__(self, slots: int) -> None:
        self._slots = threading.BoundedSemaphore(slots)
        self._lock = threading.Lock()
        self._documents: dict[tuple[str, int], tuple[threading.Lock, int]] = {}
        self.renders = 0

    def render(self, document: tuple[str, int], original: bytes, page_number: int) -> Outcome:
        """Render page `page_number` of `original`, a version of `document`."""
        with self._lock:
            lock, users = self._documents.get(document, (threading.Lock(), 0))
            self._documents[document] = (lock, users + 1)
        try:
            with lock, self._slots:
                with self._lock:
                    self.renders += 1
                call = LimitedCall(_render_png, (original, page_number), RENDER_LIMITS)
                return call.outcome()
        finally:
            with self._lock:
                lock, users = self._documents[document]
                if users == 1:
                    del self._documents[document]
                else:
                    self._documents[document] = (lock, users - 1)


_png_cache = _Cache(
    MAX_CACHED_PAGES, MAX_CACHED_PNG_BYTES, lambda png: len(png) if isinstance(png, bytes) else 0
)
_geometry_cache = _Cache(MAX_CACHED_PAGES)
renderer = _Renderer(RENDER_SLOTS)
"""The server's page renderer."""


def _open_pdf(original: bytes) -> Any:
    import pypdfium2 as pdfium  # type: ignore[import-untyped]

    return pdfium.PdfDocument(original)


def _read_geometry(original: bytes) -> tuple[PageGeometry, ...] | None:
    """The geometry of every page of the PDF `original`, or None when it cannot be
    opened (run in a limited child process)."""
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


def _render_png(original: bytes, page_number: int) -> bytes | None:
    """PNG of page `page_number` (1-based) of the PDF `original` at its
    `render_scale`, or None when there is no such page (run in a limited child
    process)."""
    pdf = _open_pdf(original)
    try:
        if not 1 <= page_number <= len(pdf):
            return None
        page = pdf[page_number - 1]
        try:
            scale = render_scale(page.get_width(), page.get_height())
            image = page.render(scale=scale).to_pil()
        finally:
            page.close()
    finally:
        pdf.close()
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=False)
    return buffer.getvalue()


def page_geometry(store: Store, document: Document) -> tuple[PageGeometry, ...] | None:
    """The geometry of every page of a stored PDF (cached), or None when the original
    is not stored, cannot be opened, or cannot be read within `GEOMETRY_LIMITS`."""
    original = store.get_original(document.doc_id, document.version)
    if original is None:
        return None

    def read() -> tuple[PageGeometry, ...] | None:
        outcome = LimitedCall(_read_geometry, (original,), GEOMETRY_LIMITS).outcome()
        return outcome.value if isinstance(outcome, Finished) else None

    key = (document.doc_id, document.version)
    result: tuple[PageGeometry, ...] | None = _geometry_cache.get(key, read)
    return result


def render_page_png(store: Store, document: Document, page_number: int) -> bytes | None:
    """PNG of page `page_number` (1-based) of a stored PDF at its `render_scale`, so
    at most `MAX_PAGE_PIXELS` pixels, or None when there is no such page.

    Rendered once per document version and page, however many ask at the same time
    (then cached), in a child process under `RENDER_LIMITS` (`renderer`). Raises
    `PageNotRendered` for a page that needs more (remembered as the page's outcome)
    or a PDF that cannot be opened.
    """
    original = store.get_original(document.doc_id, document.version)
    if original is None:
        return None
    version = (document.doc_id, document.version)

    def render() -> bytes | PageNotRendered | None:
        outcome = renderer.render(version, original, page_number)
        if isinstance(outcome, Finished):
            png: bytes | None = outcome.value
            return png
        return PageNotRendered(_not_rendered(outcome, page_number))

    result = _png_cache.get((*version, page_number), render)
    if isinstance(result, PageNotRendered):
        raise result
    return cast(bytes | None, result)


def _not_rendered(failure: Failure, page_number: int) -> str:
    """Why page `page_number` was not rendered, in one line."""
    limits = RENDER_LIMITS
    why = {
        "cpu": f"it needs more than {limits.cpu_seconds:g} s of CPU time",
        "time": f"it takes longer than {limits.wall_seconds:g} s",
        "memory": f"it needs more than {limits.memory_bytes // 2**20} MB of memory",
        "crash": f"the renderer crashed ({failure.detail})",
    }.get(failure.kind, f"it cannot be rendered ({failure.detail})")
    return f"page {page_number} is not shown: {why} (the limit)"


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
        width_px, height_px = geom.pixel_size
        rects = tuple(tuple(_fmt(v) for v in geom.rect(box)) for box in boxes if box.page == number)
        anchor = bool(rects) and not anchored
        anchored = anchored or anchor
        views.append(
            PageView(
                number=number,
                src=f"/sources/{doc}/pages/{number}.png?{version}",
                width_px=width_px,
                height_px=height_px,
                view_box=f"0 0 {_fmt(width)} {_fmt(height)}",
                rects=cast(tuple[tuple[str, str, str, str], ...], rects),
                anchor=anchor,
            )
        )
    if views and not anchored:
        views[0] = replace(views[0], anchor=True)
    return views
