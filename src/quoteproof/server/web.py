"""The web page: server-rendered HTML (Jinja2, autoescaped) with htmx, no build step.

Pages: `/` (ask, with a streamed draft posted to `/ask/stream` or a plain htmx post
to `/ask`), `/sources/{doc_id}` (the source viewer: page images with highlight
rectangles for PDFs, marked text for other formats), `/library` (documents,
upload, ingest progress; deleting a document goes through a confirmation page,
`/library/{doc_id}/retire`, that says how to undo it), `/history` and
`/answers/{id}` (the audit log), `/login`. Titles and file names are drawn with
their control, bidi and invisible characters shown (the `line` filter). Every
answer is drawn by `quoteproof.render.html`, so a quote on the page is a verbatim
figure made from a resolved `Quote` (a recorded answer's quotes
re-read from the store by `receipts.verify_recorded`; one that no longer matches is
listed as removed), and model prose is escaped text labelled as generated. The
only HTML the browser inserts (`app.js`) is HTML made here; model prose streamed as
a draft is inserted as text.

The app's Content-Security-Policy allows scripts and styles from `/static` only:
no template holds an inline script, a `style` attribute or an `on…` handler.

Access: every page acts for the request's principal (its API key, from the
`qp_key` cookie that `/login` sets, or a header); without a valid key, in auth
mode, pages redirect to `/login`. A document, answer or job outside the
principal's collections is answered 404, exactly as one that does not exist.
Every request that asks, ingests, deletes or logs in or out is a POST: no GET
changes anything or records an answer. Such a POST is refused (403) when the
browser says it comes from another origin, another port of this host included
(`auth.cross_origin`), or when it lacks the page's form token (`server.csrf`),
which protects the no-auth mode too.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePath
from typing import Annotated, Any, Literal, cast
from urllib.parse import quote as url_quote
from urllib.parse import urlencode, urlsplit

import anyio.to_thread
import jinja2
from fastapi import APIRouter, Depends, Form, HTTPException, Query, Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse, StreamingResponse
from fastapi.templating import Jinja2Templates
from markupsafe import Markup

from quoteproof.errors import QuoteproofError
from quoteproof.model import Answer, AnswerMode, ProseSegment, Quote
from quoteproof.render.html import render_answer_html, render_data_html, render_quote_html
from quoteproof.render.visible import visible_line
from quoteproof.server import csrf
from quoteproof.server.auth import (
    clear_key_cookie,
    cross_origin,
    optional_principal,
    set_key_cookie,
)
from quoteproof.server.jobs import Job
from quoteproof.server.pdf_pages import (
    PageNotRendered,
    PageView,
    page_geometry,
    page_views,
    render_page_png,
)
from quoteproof.server.state import AppState, app_state
from quoteproof.service import (
    SUPPORTED_SUFFIXES,
    AnswerEvent,
    AnswerOptions,
    Asked,
    AuditEntry,
    DataComputed,
    ModeChoice,
    Principal,
    ProseDelta,
    QuoteDropped,
    QuoteResolved,
    ScopedIndex,
    SpanError,
    StageStarted,
    check_question,
    mode_choices,
    modes,
)

__all__ = ["TEMPLATES_DIR", "router", "viewer_url"]

log = logging.getLogger(__name__)

router = APIRouter(include_in_schema=False)

TEMPLATES_DIR = Path(__file__).parent / "templates"
_env = jinja2.Environment(
    loader=jinja2.FileSystemLoader(TEMPLATES_DIR),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
_env.filters["line"] = visible_line
"""`{{ name | line }}`: a title, file name or other one-line text with its control,
bidi and invisible characters shown (`render.visible.visible_line`), as the terminal
shows them: "Invoice \u202egpj.exe" never reads "Invoice exe.jpg"."""
templates = Jinja2Templates(env=_env)

HISTORY_LIMIT = 200

StateDep = Annotated[AppState, Depends(app_state)]
MaybePrincipal = Annotated[Principal | None, Depends(optional_principal)]


# --- helpers -----------------------------------------------------------------------


def viewer_url(quote: Quote) -> str:
    """The source viewer at `quote`: `/sources/{doc_id}?version=&start=&end=#quote`."""
    query = urlencode({"version": quote.doc_version, "start": quote.start, "end": quote.end})
    return f"/sources/{url_quote(quote.doc_id, safe='')}?{query}#quote"


def _is_htmx(request: Request) -> bool:
    return request.headers.get("hx-request") == "true"


def _safe_next(target: str | None) -> str:
    """A local path to go to after login; "/" for anything else."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    if any(ch < " " for ch in target) or urlsplit(target).netloc:
        return "/"
    return target


def _login_redirect(request: Request) -> Response:
    """Where a request without a valid key goes: the login page (htmx is told to
    load it as a whole page)."""
    path = request.url.path
    if request.url.query:
        path += "?" + request.url.query
    target = "/login?" + urlencode({"next": _safe_next(path)})
    if _is_htmx(request):
        return Response(status_code=401, headers={"HX-Redirect": target})
    return RedirectResponse(target, status_code=303)


def _refusal(request: Request, token: object) -> str | None:
    """Why a request that changes something is refused: it comes from another origin,
    or `token` (its form field) is not the page's form token; None when it may go on."""
    if cross_origin(request):
        return "Cross-site request refused."
    if not csrf.valid_csrf_token(request, token):
        return "This form has expired or is not from this site: reload the page and try again."
    return None


def _base_context(request: Request, who: Principal | None, current: str) -> dict[str, Any]:
    state: AppState = request.app.state.quoteproof
    return {
        "request": request,
        "current": current,
        "auth": state.config.auth,
        "user": None if who is None or not state.config.auth else who.name,
        "csrf_token": csrf.csrf_token(request),
    }


def _page(
    request: Request,
    who: Principal | None,
    template: str,
    current: str = "",
    status_code: int = 200,
    headers: Mapping[str, str] | None = None,
    **context: Any,
) -> HTMLResponse:
    return templates.TemplateResponse(
        request,
        template,
        {**_base_context(request, who, current), **context},
        status_code=status_code,
        headers=headers,
    )


def _fragment(template: str, **context: Any) -> str:
    return _env.get_template(template).render(**context)


def _error(request: Request, who: Principal | None, status_code: int, message: str) -> HTMLResponse:
    """An error: a fragment for htmx, a whole page otherwise."""
    if _is_htmx(request):
        return HTMLResponse(_fragment("error_fragment.html", message=message), status_code)
    return _page(request, who, "error.html", status_code=status_code, message=message)


def _not_found(request: Request, who: Principal | None) -> HTMLResponse:
    return _error(request, who, 404, "Not found.")


def _answer_html(asked: Asked) -> str:
    """The answer fragment: the renderer's HTML and the permalink to its audit entry."""
    html = Markup(render_answer_html(asked.answer, source_url=viewer_url))
    return _fragment("answer_fragment.html", answer_html=html, entry_id=asked.entry.entry_id)


def _offered_modes(state: AppState) -> tuple[ModeChoice, ...]:
    """The answer modes the page offers, each with its title and summary: those the
    backend can run (`service.mode_choices`)."""
    return mode_choices(state.backend())


def _check_question(question: str, mode: str) -> str | None:
    """Why a question (`service.check_question`) or mode is unusable, or None."""
    try:
        check_question(question)
    except QuoteproofError as exc:
        return str(exc)
    if mode not in modes():
        return f"Unknown answer mode {mode!r}."
    return None


def _error_message(exc: QuoteproofError) -> tuple[int, str]:
    from quoteproof.server.app import error_status

    return error_status(exc), str(exc)


def _ask(
    state: AppState,
    who: Principal,
    question: str,
    mode: AnswerMode,
    events: Callable[[AnswerEvent], None] | None = None,
) -> Asked:
    """Answer `question` for `who`, recorded in the audit log (blocking)."""
    return state.view(who).ask(question, state.backend(), AnswerOptions(mode), events=events)


# --- ask -----------------------------------------------------------------------------


@router.get("/", response_class=HTMLResponse)
def ask_page(request: Request, state: StateDep, who: MaybePrincipal) -> Response:
    """The ask page: question form (offering the modes the backend can run) and the
    answer region."""
    if who is None:
        return _login_redirect(request)
    modes = _offered_modes(state)
    return _page(
        request, who, "ask.html", "ask", modes=modes, question="", mode="quote", answer_html=None
    )


@router.post("/ask", response_class=HTMLResponse)
def ask_post(
    request: Request,
    state: StateDep,
    who: MaybePrincipal,
    question: Annotated[str, Form()] = "",
    mode: Annotated[str, Form()] = "quote",
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    """Answer a question: the answer fragment for htmx, the ask page with the answer
    for a plain form post."""
    if who is None:
        return _login_redirect(request)
    refusal = _refusal(request, csrf_token)
    if refusal is not None:
        return _error(request, who, 403, refusal)
    problem = _check_question(question, mode)
    if problem is not None:
        return _error(request, who, 400, problem)
    try:
        asked = _ask(state, who, question, cast(AnswerMode, mode))
    except QuoteproofError as exc:
        return _error(request, who, *_error_message(exc))
    html = _answer_html(asked)
    if _is_htmx(request):
        return HTMLResponse(html)
    return _page(
        request,
        who,
        "ask.html",
        "ask",
        modes=_offered_modes(state),
        question=question,
        mode=mode,
        answer_html=Markup(html),
    )


def _sse(event: str, data: Mapping[str, Any]) -> str:
    """One server-sent event; JSON data (ASCII, so no line break can split it)."""
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=True)}\n\n"


def _event_message(event: AnswerEvent) -> str:
    if isinstance(event, ProseDelta):
        return _sse("prose", {"text": event.text})
    if isinstance(event, QuoteResolved):
        return _sse("quote", {"html": render_quote_html(event.quote, source_url=viewer_url)})
    if isinstance(event, DataComputed):
        return _sse("data", {"html": render_data_html(event.result)})
    if isinstance(event, QuoteDropped):
        return _sse("dropped", {"reason": event.reason})
    assert isinstance(event, StageStarted)
    return _sse("stage", {"stage": event.stage})


@dataclass(frozen=True)
class _Finished:
    asked: Asked | None
    error: str | None = None


_background: set[asyncio.Task[None]] = set()


async def _stream_answer(
    state: AppState, who: Principal, question: str, mode: AnswerMode
) -> AsyncIterator[str]:
    """Run `ask` on a worker thread; yield its events as they come, then the final
    answer fragment (or a failure)."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[AnswerEvent | _Finished] = asyncio.Queue()

    def sink(event: AnswerEvent) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, event)

    async def work() -> None:
        try:
            asked = await anyio.to_thread.run_sync(_ask, state, who, question, mode, sink)
        except QuoteproofError as exc:
            queue.put_nowait(_Finished(None, str(exc)))
        except Exception:
            log.exception("streamed ask failed")
            queue.put_nowait(_Finished(None, "The server failed to answer."))
        else:
            queue.put_nowait(_Finished(asked))

    # The task outlives a client that goes away: the answer is still recorded.
    task = asyncio.create_task(work())
    _background.add(task)
    task.add_done_callback(_background.discard)
    yield ": started\n\n"
    while True:
        item = await queue.get()
        if isinstance(item, _Finished):
            if item.asked is None:
                yield _sse("failure", {"message": item.error or "failed"})
            else:
                entry_id = item.asked.entry.entry_id
                html = _answer_html(item.asked)
                yield _sse("final", {"html": html, "permalink": f"/answers/{entry_id}"})
            return
        yield _event_message(item)


@router.post("/ask/stream")
def ask_stream(
    request: Request,
    state: StateDep,
    who: MaybePrincipal,
    question: Annotated[str, Form()] = "",
    mode: Annotated[str, Form()] = "quote",
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    """Answer the posted question (the ask form's fields) as a stream of server-sent
    events: `stage`, `prose` (model text, drawn as text), `quote` and `data` (HTML
    made here from resolved quotes and computed results), `dropped`, then `final`
    (the answer fragment) or `failure`. Refused as `/ask` is; errors are text."""
    if who is None:
        return Response("a valid API key is needed", status_code=401, media_type="text/plain")
    refusal = _refusal(request, csrf_token)
    if refusal is not None:
        return Response(refusal, status_code=403, media_type="text/plain")
    problem = _check_question(question, mode)
    if problem is not None:
        return Response(problem, status_code=400, media_type="text/plain")
    return StreamingResponse(
        _stream_answer(state, who, question, cast(AnswerMode, mode)),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


# --- source viewer -------------------------------------------------------------------


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
        return _login_redirect(request)
    scoped = state.view(who)
    try:
        span = scoped.span(doc_id, version, start, end, allow_empty=True)
    except SpanError as exc:
        return _error(request, who, 400, str(exc))
    if span is None:
        return _not_found(request, who)
    document, text, lo, hi = span.document, span.document.text, span.start, span.end
    has_span = start is not None or end is not None
    pdf_pages: list[PageView] = []
    geometry = page_geometry(scoped.store, document) if document.format == "pdf" else None
    if geometry is not None and view == "page":
        if has_span and hi > lo:
            location = scoped.locate(span)
            pages = location.pages or ()
            boxes = location.boxes
        else:
            pages, boxes = tuple(range(1, len(geometry) + 1)), ()
        pdf_pages = page_views(document, geometry, pages, boxes)
    query = {"version": document.version}
    if has_span:
        query.update(start=lo, end=hi)
    doc = url_quote(document.doc_id, safe="")
    return _page(
        request,
        who,
        "source.html",
        "",
        document=document,
        file_name=PurePath(document.source_path).name or document.source_path,
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


# --- library -------------------------------------------------------------------------


def _library_rows(view: ScopedIndex) -> list[dict[str, Any]]:
    rows = []
    for summary in view.documents():
        doc = url_quote(summary.doc_id, safe="")
        path = summary.source_path
        cut = max(path.rfind("/"), path.rfind("\\")) + 1  # the file name: shown whole
        rows.append(
            {
                "doc_id": summary.doc_id,
                "title": summary.title or PurePath(path).name,
                "path": path,
                "path_head": path[:cut],
                "path_tail": path[cut:],
                "format": summary.format,
                "collection": summary.collection,
                "version": summary.version,
                "view_url": f"/sources/{doc}?{urlencode({'version': summary.version})}",
                "retire_url": f"/library/{doc}/retire",
            }
        )
    return rows


def _library_table(view: ScopedIndex, oob: bool = False) -> str:
    """The document table fragment; `oob`: marked to replace the page's table out of
    band (htmx `hx-swap-oob`)."""
    return _fragment("library_table.html", rows=_library_rows(view), oob=oob)


def _job_fragment(state: AppState, who: Principal, job: Job) -> str:
    """A job's progress for htmx; once the job has ended, with the document table
    (out of band), so the page lists its documents as soon as it says so."""
    context = _job_context(job)
    table = None
    if context["finished"]:
        table = Markup(_library_table(state.view(who), oob=True))
    return _fragment("job.html", **context, library_table=table)


def _job_context(job: Job) -> dict[str, Any]:
    snapshot = job.snapshot()
    results = [{**result, "name": PurePath(result["path"]).name} for result in snapshot["results"]]
    return {
        "job": snapshot,
        "results": results,
        "finished": snapshot["state"] in ("done", "failed"),
        "poll_url": f"/library/jobs/{url_quote(job.id, safe='')}",
    }


def _collections_for(who: Principal) -> list[str]:
    return list(who.collections) if who.collections is not None else []


@router.get("/library", response_class=HTMLResponse)
def library_page(
    request: Request,
    state: StateDep,
    who: MaybePrincipal,
    job: Annotated[str | None, Query()] = None,
    retired: Annotated[str | None, Query()] = None,
) -> Response:
    """The documents the principal may see, the upload form and ingest progress;
    `retired`: a document just retired, named with how to undo it."""
    if who is None:
        return _login_redirect(request)
    view = state.view(who)
    found = view.job(state.jobs.get, job) if job else None
    job_context = _job_context(found) if found else None
    gone = view.document(retired) if retired else None
    return _page(
        request,
        who,
        "library.html",
        "library",
        rows=_library_rows(view),
        oob=False,
        retired=gone,
        retired_name=PurePath(gone.source_path).name if gone else "",
        collections=_collections_for(who),
        max_upload_mb=f"{state.config.max_upload_mb:g}",
        accept=",".join(SUPPORTED_SUFFIXES),
        job_context=job_context,
    )


@router.get("/library/table", response_class=HTMLResponse)
def library_table(request: Request, state: StateDep, who: MaybePrincipal) -> Response:
    """The document table alone, for a client that refreshes only the table (the
    page itself gets it with its finished ingest job)."""
    if who is None:
        return _login_redirect(request)
    return HTMLResponse(_library_table(state.view(who)))


@router.get("/library/{doc_id}/retire", response_class=HTMLResponse)
def library_retire_page(
    request: Request, doc_id: str, state: StateDep, who: MaybePrincipal
) -> Response:
    """The confirmation step before a document is retired: what retiring does, how
    to undo it, and the button that does it (a form, so no script or browser dialog
    is needed)."""
    if who is None:
        return _login_redirect(request)
    view = state.view(who)
    document = view.document(doc_id)
    if document is None or not view.is_current(document):
        return _not_found(request, who)  # unknown, another collection's, or retired
    return _page(
        request,
        who,
        "retire.html",
        "library",
        document=document,
        file_name=PurePath(document.source_path).name or document.source_path,
        retire_url=f"/library/{url_quote(document.doc_id, safe='')}/retire",
    )


@router.post("/library/{doc_id}/retire", response_class=HTMLResponse)
def library_retire(
    request: Request,
    doc_id: str,
    state: StateDep,
    who: MaybePrincipal,
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    """Retire a document (its stored versions stay readable, so old answers verify),
    then show the library saying so and how to undo it."""
    if who is None:
        return _login_redirect(request)
    refusal = _refusal(request, csrf_token)
    if refusal is not None:
        return _error(request, who, 403, refusal)
    if not state.view(who).retire(doc_id):
        return _not_found(request, who)
    return RedirectResponse(f"/library?{urlencode({'retired': doc_id})}", status_code=303)


UPLOAD_ROUTE = ("POST", "/library/upload")
"""The page's upload route: its body may carry the upload limit."""


@router.post(UPLOAD_ROUTE[1], response_class=HTMLResponse)
async def library_upload(request: Request, state: StateDep, who: MaybePrincipal) -> Response:
    """Upload files into a collection and start ingesting them (the API's checks:
    size limit, file types, mislabelled content, names, collection access)."""
    if who is None:
        return _login_redirect(request)
    if cross_origin(request):  # refused before the body is read
        return _error(request, who, 403, "Cross-site request refused.")
    from quoteproof.server import api

    try:
        form = await api.read_upload_form(request)
        try:
            refusal = _refusal(request, form.get(csrf.FIELD))
            if refusal is not None:
                return _error(request, who, 403, refusal)
            job = await api.ingest_upload(form, who, state)
        finally:
            await form.close()
    except HTTPException as exc:
        return _error(request, who, exc.status_code, str(exc.detail))
    if not _is_htmx(request):
        return RedirectResponse(f"/library?{urlencode({'job': job.id})}", status_code=303)
    return HTMLResponse(_job_fragment(state, who, job), status_code=202)


@router.get("/library/jobs/{job_id}", response_class=HTMLResponse)
def library_job(request: Request, job_id: str, state: StateDep, who: MaybePrincipal) -> Response:
    """An ingest job's progress (polled by htmx every second until it ends; once it
    has ended, with the refreshed document table)."""
    if who is None:
        return _login_redirect(request)
    job = state.view(who).job(state.jobs.get, job_id)
    if job is None:
        return _not_found(request, who)
    return HTMLResponse(_job_fragment(state, who, job))


# --- history and recorded answers -----------------------------------------------------


_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
"""Month names as the page's script writes them (whatever the server's locale)."""


def _utc_text(iso: str) -> str:
    """An ISO 8601 time as "24 Nov 2026, 14:03 UTC" (`iso` itself when unreadable);
    the page's script shows it in the reader's time zone."""
    try:
        when = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    when = (when if when.tzinfo else when.replace(tzinfo=UTC)).astimezone(UTC)
    return f"{when.day} {_MONTHS[when.month - 1]} {when:%Y, %H:%M} UTC"


def _prose_cites(answer: Answer) -> bool:
    """Whether `answer` shows prose that cites passages it holds (what `show_cited`
    adds to its rendering)."""
    return answer.status == "answered" and any(
        isinstance(segment, ProseSegment) and answer.cited_passages(segment.citations)
        for segment in answer.segments
    )


def _entry_summary(entry: AuditEntry) -> dict[str, Any]:
    try:
        body = json.loads(entry.body)
    except ValueError:
        body = {}
    if not isinstance(body, dict):
        body = {}
    question, status = body.get("question"), body.get("status")
    return {
        "id": entry.entry_id,
        "url": f"/answers/{url_quote(entry.entry_id, safe='')}",
        "time": entry.time,
        "time_text": _utc_text(entry.time),
        "user": entry.user or "unknown",
        "question": question if isinstance(question, str) else "(unreadable)",
        "status": status if isinstance(status, str) else "unknown",
    }


@router.get("/history", response_class=HTMLResponse)
def history_page(request: Request, state: StateDep, who: MaybePrincipal) -> Response:
    """The audit log entries the principal may see, newest first."""
    if who is None:
        return _login_redirect(request)
    entries = state.view(who).history(HISTORY_LIMIT)
    return _page(
        request,
        who,
        "history.html",
        "history",
        entries=[_entry_summary(entry) for entry in entries],
        limit=HISTORY_LIMIT,
    )


@router.get("/answers/{entry_id}", response_class=HTMLResponse)
def answer_page(
    request: Request,
    entry_id: str,
    state: StateDep,
    who: MaybePrincipal,
    cited: Annotated[bool, Query()] = False,
) -> Response:
    """A recorded answer, drawn by the HTML renderer (`?cited=1`: with the passages
    its prose cites; the link to them only when it has such prose)."""
    if who is None:
        return _login_redirect(request)
    view = state.view(who)
    entry = view.entry(entry_id)
    if entry is None:
        return _not_found(request, who)
    try:
        answer = view.recorded_answer(entry)
    except ValueError:
        return _error(request, who, 500, "This audit entry does not hold a readable answer.")
    html = render_answer_html(answer, source_url=viewer_url, show_cited=cited)
    base = f"/answers/{url_quote(entry.entry_id, safe='')}"
    return _page(
        request,
        who,
        "answer.html",
        "history",
        entry=_entry_summary(entry),
        collections=", ".join(entry.collections),
        answer_html=Markup(html),
        cited=cited,
        prose_cites=_prose_cites(answer),
        toggle_url=base if cited else f"{base}?cited=1",
    )


# --- login ---------------------------------------------------------------------------


@router.get("/login", response_class=HTMLResponse)
def login_page(
    request: Request,
    who: MaybePrincipal,
    next: Annotated[str, Query()] = "/",
) -> Response:
    """The login form (an API key)."""
    return _page(request, who, "login.html", "login", next=_safe_next(next), problem=None)


@router.post("/login", response_class=HTMLResponse)
def login_post(
    request: Request,
    state: StateDep,
    key: Annotated[str, Form()] = "",
    next: Annotated[str, Form()] = "/",
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    """Check the key and keep it in the `qp_key` cookie (HttpOnly, SameSite=Strict)."""
    target = _safe_next(next)
    refusal = _refusal(request, csrf_token)
    if refusal is not None:
        return _error(request, None, 403, refusal)
    if not state.config.auth:
        return RedirectResponse(target, status_code=303)
    token = key.strip()
    if state.admin().authenticate(token) is None:
        return _page(
            request,
            None,
            "login.html",
            "login",
            status_code=401,
            next=target,
            problem="That key is not valid (or has been revoked).",
        )
    response = RedirectResponse(target, status_code=303)
    set_key_cookie(response, token, secure=request.url.scheme == "https")
    return response


@router.post("/logout")
def logout(request: Request, csrf_token: Annotated[str, Form()] = "") -> Response:
    """Forget the login cookie."""
    refusal = _refusal(request, csrf_token)
    if refusal is not None:
        return Response(refusal, status_code=403, media_type="text/plain")
    response = RedirectResponse("/login", status_code=303)
    clear_key_cookie(response)
    return response
