"""The source viewer of the web face: `/sources/{doc_id}` (a document's text with a
quote's span marked, or its PDF pages with the span highlighted) and its page
images."""

from __future__ import annotations

from typing import Annotated, Literal
from urllib.parse import quote as url_quote
from urllib.parse import urlencode

from fastapi import Query, Request, Response
from fastapi.responses import HTMLResponse

from quoteproof.server import web_page as pages
from quoteproof.server.pdf_pages import (
    PageNotRendered,
    PageView,
    page_geometry,
    page_views,
    render_page_png,
)
from quoteproof.server.web_page import MaybePrincipal, StateDep, router
from quoteproof.service import SpanError


@router.get("/sources/{doc_id}", response_class=HTMLResponse)
def source_page(
    request: Request,
    doc_id: str,
    state: StateDep,
    who: MaybePrincipal,
    version: Annotated[int | None, Query(ge=1)] = None,
    start: Annotated[int | None, Query(ge=0)] = None,
    end: Annotated[int | None, Query(ge=0)] = None,
    view: Annotated[Literal["page", "text"], Query()] = "page",
) -> Response:
    """The source viewer: the span `[start:end]` of a document version marked in its
    text, or highlighted on its page images (PDF)."""
    if who is None:
        return pages.login_redirect(request)
    scoped = state.view(who)
    try:
        span = scoped.span(doc_id, version, start, end, allow_empty=True)
    except SpanError as exc:
        return pages.error(request, who, 400, str(exc))
    if span is None:
        return pages.not_found(request, who)
    document, text, lo, hi = span.document, span.document.text, span.start, span.end
    has_span = start is not None or end is not None
    pdf_pages: list[PageView] = []
    geometry = page_geometry(scoped.store, document) if document.format == "pdf" else None
    if geometry is not None and view == "page":
        if has_span and hi > lo:
            location = scoped.locate(span)
            shown = location.pages or ()
            boxes = location.boxes
        else:
            shown, boxes = tuple(range(1, len(geometry) + 1)), ()
        pdf_pages = page_views(document, geometry, shown, boxes)
    query = {"version": document.version}
    if has_span:
        query.update(start=lo, end=hi)
    doc = url_quote(document.doc_id, safe="")
    return pages.respond(
        request,
        who,
        "source.html",
        "",
        document=document,
        file_name=pages.file_name(document.source_path),
        has_span=has_span,
        start=lo,
        end=hi,
        before=text[:lo] if has_span else text,
        marked=text[lo:hi] if has_span else "",
        after=text[hi:] if has_span else "",
        pdf_pages=pdf_pages,
        is_pdf=geometry is not None,
        text_view_url=f"/sources/{doc}?{urlencode({**query, 'view': 'text'})}#quote",
        page_view_url=f"/sources/{doc}?{urlencode(query)}#quote",
    )


@router.get("/sources/{doc_id}/pages/{page}.png")
def page_image(
    request: Request,
    doc_id: str,
    page: int,
    state: StateDep,
    who: MaybePrincipal,
    version: Annotated[int | None, Query(ge=1)] = None,
) -> Response:
    """Page `page` of a stored PDF as a PNG (404 for another collection's document;
    422 with the cause for a page too costly to render: `pdf_pages.RENDER_LIMITS`)."""
    if who is None:
        return Response("a valid API key is needed", status_code=401, media_type="text/plain")
    view = state.view(who)
    document = view.document(doc_id, version)
    png = None
    if document is not None and document.format == "pdf":
        try:
            png = render_page_png(view.store, document, page)
        except PageNotRendered as exc:
            return Response(str(exc), status_code=422, media_type="text/plain")
    if png is None:
        return Response("not found", status_code=404, media_type="text/plain")
    return Response(
        png, media_type="image/png", headers={"Cache-Control": "private, max-age=86400"}
    )
