"""The library of the web face: `/library` (documents, upload, ingest progress),
retiring a document through its confirmation page, uploads and job progress."""

from __future__ import annotations

from pathlib import PurePath
from typing import Annotated, Any
from urllib.parse import quote as url_quote
from urllib.parse import urlencode

from fastapi import Form, HTTPException, Query, Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse
from markupsafe import Markup

from quoteproof.server import csrf
from quoteproof.server import web_page as pages
from quoteproof.server.auth import cross_origin
from quoteproof.server.job_queue import Job
from quoteproof.server.state import AppState
from quoteproof.server.web_page import MaybePrincipal, StateDep, router
from quoteproof.service import Principal, ScopedIndex
from quoteproof.service.uploads import SUPPORTED_SUFFIXES, format_names


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
    return pages.fragment("library_table.html", rows=_library_rows(view), oob=oob)


def _job_fragment(state: AppState, who: Principal, job: Job) -> str:
    """A job's progress for htmx; once the job has ended, with the document table
    (out of band), so the page lists its documents as soon as it says so."""
    context = _job_context(job)
    table = None
    if context["finished"]:
        table = Markup(_library_table(state.view(who), oob=True))
    return pages.fragment("job.html", **context, library_table=table)


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
        return pages.login_redirect(request)
    view = state.view(who)
    found = view.job(state.jobs.get, job) if job else None
    job_context = _job_context(found) if found else None
    gone = view.document(retired) if retired else None
    return pages.respond(
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
        formats=format_names(),
        job_context=job_context,
    )


@router.get("/library/table", response_class=HTMLResponse)
def library_table(request: Request, state: StateDep, who: MaybePrincipal) -> Response:
    """The document table alone, for a client that refreshes only the table (the
    page itself gets it with its finished ingest job)."""
    if who is None:
        return pages.login_redirect(request)
    return HTMLResponse(_library_table(state.view(who)))


@router.get("/library/{doc_id}/retire", response_class=HTMLResponse)
def library_retire_page(
    request: Request, doc_id: str, state: StateDep, who: MaybePrincipal
) -> Response:
    """The confirmation step before a document is retired: what retiring does, how
    to undo it, and the button that does it (a form, so no script or browser dialog
    is needed)."""
    if who is None:
        return pages.login_redirect(request)
    view = state.view(who)
    document = view.document(doc_id)
    if document is None or not view.is_current(document):
        return pages.not_found(request, who)  # unknown, another collection's, or retired
    return pages.respond(
        request,
        who,
        "retire.html",
        "library",
        document=document,
        file_name=pages.file_name(document.source_path),
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
        return pages.login_redirect(request)
    refusal = pages.post_refusal(request, csrf_token)
    if refusal is not None:
        return pages.error(request, who, 403, refusal)
    if not state.view(who).retire(doc_id):
        return pages.not_found(request, who)
    return RedirectResponse(f"/library?{urlencode({'retired': doc_id})}", status_code=303)


UPLOAD_ROUTE = ("POST", "/library/upload")
"""The page's upload route: its body may carry the upload limit."""


@router.post(UPLOAD_ROUTE[1], response_class=HTMLResponse)
async def library_upload(request: Request, state: StateDep, who: MaybePrincipal) -> Response:
    """Upload files into a collection and start ingesting them (the API's checks:
    size limit, file types, mislabelled content, names, collection access)."""
    if who is None:
        return pages.login_redirect(request)
    if cross_origin(request):  # refused before the body is read
        return pages.error(request, who, 403, "Cross-site request refused.")
    from quoteproof.server import api

    try:
        form = await api.read_upload_form(request)
        try:
            refusal = pages.post_refusal(request, form.get(csrf.FIELD))
            if refusal is not None:
                return pages.error(request, who, 403, refusal)
            job = await api.ingest_upload(form, who, state)
        finally:
            await form.close()
    except HTTPException as exc:
        return pages.error(request, who, exc.status_code, str(exc.detail))
    if not pages.is_htmx(request):
        return RedirectResponse(f"/library?{urlencode({'job': job.id})}", status_code=303)
    return HTMLResponse(_job_fragment(state, who, job), status_code=202)


@router.get("/library/jobs/{job_id}", response_class=HTMLResponse)
def library_job(request: Request, job_id: str, state: StateDep, who: MaybePrincipal) -> Response:
    """An ingest job's progress (polled by htmx every second until it ends; once it
    has ended, with the refreshed document table)."""
    if who is None:
        return pages.login_redirect(request)
    job = state.view(who).job(state.jobs.get, job_id)
    if job is None:
        return pages.not_found(request, who)
    return HTMLResponse(_job_fragment(state, who, job))
