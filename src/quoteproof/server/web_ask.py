"""The ask page of the web face: `/` (the question form), `/ask` (an answer, as an
htmx fragment or a whole page) and `/ask/stream` (the answer as server-sent
events while it is written)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, cast

import anyio.to_thread
from fastapi import Form, Request, Response
from fastapi.responses import HTMLResponse, StreamingResponse
from markupsafe import Markup
from pydantic import BaseModel

from quoteproof.errors import QuoteproofError
from quoteproof.model import AnswerMode, ContextForm
from quoteproof.render.html import render_answer_html, render_data_html, render_quote_html
from quoteproof.server import web_page as pages
from quoteproof.server.state import AppState
from quoteproof.server.web_page import MaybePrincipal, StateDep, router
from quoteproof.service import (
    AnswerEvent,
    AnswerOptions,
    Asked,
    DataComputed,
    ModeChoice,
    Principal,
    ProseDelta,
    QuoteDropped,
    QuoteResolved,
    StageStarted,
    check_question,
    context_forms,
    modes,
)

log = logging.getLogger(__name__)


def _answer_html(asked: Asked) -> str:
    """The answer fragment: the renderer's HTML and the permalink to its audit entry."""
    html = Markup(render_answer_html(asked.answer, source_url=pages.viewer_url))
    return pages.fragment("answer_fragment.html", answer_html=html, entry_id=asked.entry.entry_id)


def _offered_modes(state: AppState, who: Principal) -> tuple[ModeChoice, ...]:
    """The answer modes the page offers `who`, each with its title and summary:
    those the backend can run (`ScopedIndex.modes`)."""
    return state.view(who).modes(state.backend())


MAX_LINKED_QUESTION = 10_000
"""The longest question `?q=` fills in (the question box's own limit)."""


class AskForm(BaseModel):
    """The ask form's fields, as `/ask` and `/ask/stream` take them (a missing one
    is empty; the mode, quote; the context, paragraphs)."""

    question: str = ""
    mode: str = "quote"
    context: str = "paragraphs"
    csrf_token: str = ""

    def options(self) -> AnswerOptions:
        """The answer options the form names (checked by `_refused` first)."""
        return AnswerOptions(
            mode=cast(AnswerMode, self.mode), context=cast(ContextForm, self.context)
        )


AskFormDep = Annotated[AskForm, Form()]


def _refused(request: Request, form: AskForm) -> tuple[int, str] | None:
    """Why a posted question is refused, with the status that says so: 403 for a
    request not from the page (`post_refusal`), 400 for a question the service's
    rule refuses (`service.check_question`), an unknown mode or an unknown context
    form; None when it may go on."""
    refusal = pages.post_refusal(request, form.csrf_token)
    if refusal is not None:
        return 403, refusal
    try:
        check_question(form.question)
    except QuoteproofError as exc:
        return 400, str(exc)
    if form.mode not in modes():
        return 400, f"Unknown answer mode {form.mode!r}."
    if form.context not in context_forms():
        return 400, f"Unknown context {form.context!r}."
    return None


def _error_message(exc: QuoteproofError) -> tuple[int, str]:
    from quoteproof.server.app import error_status

    return error_status(exc), str(exc)


def _ask(
    state: AppState,
    who: Principal,
    form: AskForm,
    events: Callable[[AnswerEvent], None] | None = None,
) -> Asked:
    """Answer the form's question for `who` as its options say, recorded in the
    audit log (blocking)."""
    return state.view(who).ask(form.question, state.backend(), form.options(), events=events)


@router.get("/", response_class=HTMLResponse)
def ask_page(request: Request, state: StateDep, who: MaybePrincipal, q: str = "") -> Response:
    """The ask page: question form (offering the modes the backend can run and the
    context forms worth offering for it) and the answer region. `?q=QUESTION` fills
    the question box (cut to MAX_LINKED_QUESTION characters), so a question can be
    linked to; it is asked only when the reader submits it."""
    if who is None:
        return pages.login_redirect(request)
    return _ask_page(request, state, who, AskForm(question=q[:MAX_LINKED_QUESTION]), None)


def _ask_page(
    request: Request, state: AppState, who: Principal, form: AskForm, answer_html: Markup | None
) -> Response:
    """The ask page with `form`'s fields filled in and `answer_html` below it."""
    return pages.respond(
        request,
        who,
        "ask.html",
        "ask",
        modes=_offered_modes(state, who),
        contexts=state.view(who).contexts(state.backend()),
        form=form,
        answer_html=answer_html,
    )


@router.post("/ask", response_class=HTMLResponse)
def ask_post(request: Request, state: StateDep, who: MaybePrincipal, form: AskFormDep) -> Response:
    """Answer a question: the answer fragment for htmx, the ask page with the answer
    for a plain form post."""
    if who is None:
        return pages.login_redirect(request)
    refused = _refused(request, form)
    if refused is not None:
        return pages.error(request, who, *refused)
    try:
        asked = _ask(state, who, form)
    except QuoteproofError as exc:
        return pages.error(request, who, *_error_message(exc))
    html = _answer_html(asked)
    if pages.is_htmx(request):
        return HTMLResponse(html)
    return _ask_page(request, state, who, form, Markup(html))


def _sse(event: str, data: Mapping[str, Any]) -> str:
    """One server-sent event; JSON data (ASCII, so no line break can split it)."""
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=True)}\n\n"


def _event_message(event: AnswerEvent) -> str:
    if isinstance(event, ProseDelta):
        return _sse("prose", {"text": event.text})
    if isinstance(event, QuoteResolved):
        return _sse("quote", {"html": render_quote_html(event.quote, source_url=pages.viewer_url)})
    if isinstance(event, DataComputed):
        return _sse("data", {"html": render_data_html(event.result)})
    if isinstance(event, QuoteDropped):
        return _sse("dropped", {"reason": event.rejected.reason})
    assert isinstance(event, StageStarted)
    return _sse("stage", {"stage": event.stage})


@dataclass(frozen=True)
class _Finished:
    asked: Asked | None
    error: str | None = None


_background: set[asyncio.Task[None]] = set()


async def _stream_answer(state: AppState, who: Principal, form: AskForm) -> AsyncIterator[str]:
    """Run `ask` on a worker thread; yield its events as they come, then the final
    answer fragment (or a failure)."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[AnswerEvent | _Finished] = asyncio.Queue()

    def sink(event: AnswerEvent) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, event)

    async def work() -> None:
        try:
            asked = await anyio.to_thread.run_sync(_ask, state, who, form, sink)
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
    request: Request, state: StateDep, who: MaybePrincipal, form: AskFormDep
) -> Response:
    """Answer the posted question (the ask form's fields) as a stream of server-sent
    events: `stage`, `prose` (model text, drawn as text), `quote` and `data` (HTML
    made here from resolved quotes and computed results), `dropped`, then `final`
    (the answer fragment) or `failure`. Refused as `/ask` is; errors are text."""
    if who is None:
        return Response("a valid API key is needed", status_code=401, media_type="text/plain")
    refused = _refused(request, form)
    if refused is not None:
        return Response(refused[1], status_code=refused[0], media_type="text/plain")
    return StreamingResponse(
        _stream_answer(state, who, form),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )
