"""The audit history of the web face: `/history` (the entries a principal may see)
and `/answers/{entry_id}` (a recorded answer, its quotes re-read from the store)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Annotated, Any
from urllib.parse import quote as url_quote

from fastapi import Query, Request, Response
from fastapi.responses import HTMLResponse
from markupsafe import Markup

from quoteproof.model import Answer, ProseSegment
from quoteproof.render.html import render_answer_html
from quoteproof.server import web_page as pages
from quoteproof.server.web_page import MaybePrincipal, StateDep, router
from quoteproof.service import AuditEntry

HISTORY_LIMIT = 200


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
        return pages.login_redirect(request)
    entries = state.view(who).history(HISTORY_LIMIT)
    return pages.respond(
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
        return pages.login_redirect(request)
    view = state.view(who)
    entry = view.entry(entry_id)
    if entry is None:
        return pages.not_found(request, who)
    try:
        answer = view.recorded_answer(entry)
    except ValueError:
        return pages.error(request, who, 500, "This audit entry does not hold a readable answer.")
    html = render_answer_html(answer, source_url=pages.viewer_url, show_cited=cited)
    base = f"/answers/{url_quote(entry.entry_id, safe='')}"
    return pages.respond(
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
