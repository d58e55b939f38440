"""The JSON API under `/v1/`.

Every endpoint that touches documents or answers acts for the request's
`Principal` and sees only its collections: searches and answers are limited to
them, and a single item of another collection (document, source, answer, job) is
answered 404, exactly as an item that does not exist. Asking to read a collection
the key lacks is 403; so is writing into one.
"""

from __future__ import annotations

import contextlib
import errno
import re
import shutil
import unicodedata
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Body, Depends, HTTPException, Query, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData, UploadFile

from quoteproof.defaults import DEFAULT_SEARCH_TOP_K
from quoteproof.errors import AccessDeniedError, UsageError
from quoteproof.model import DEFAULT_COLLECTION
from quoteproof.render.hits import fact_hit_to_dict, hit_to_dict
from quoteproof.server.api_bodies import (
    ERRORS,
    MAX_TOP_K,
    AnswerRecordBody,
    AskRequest,
    DocumentsBody,
    ErrorBody,
    HealthBody,
    JobBody,
    RetiredBody,
    SearchBody,
    SourceBody,
    VerifyBody,
    VersionBody,
)
from quoteproof.server.auth import optional_principal, principal
from quoteproof.server.job_queue import Job
from quoteproof.server.json_body import StrictJSONRoute
from quoteproof.server.state import AppState, AppStateDep
from quoteproof.service import (
    MAX_QUESTION_CHARS,
    AnswerOptions,
    Principal,
    about,
)
from quoteproof.service.uploads import SNIFF_BYTES, upload_problem

router = APIRouter(prefix="/v1", tags=["v1"], route_class=StrictJSONRoute)

MAX_CONTEXT = 10_000
MAX_FILES_PER_UPLOAD = 100
UPLOAD_ROUTE = ("POST", "/v1/documents")
"""The upload route: its body may carry the upload limit, not the JSON one."""
MAX_NAME_CHARS = 200

PrincipalDep = Annotated[Principal, Depends(principal)]
StateDep = AppStateDep

_NOT_FOUND = "not found"

F = TypeVar("F", bound=Callable[..., Any])


def _not_found() -> HTTPException:
    return HTTPException(404, _NOT_FOUND)


def _route(
    method: str,
    path: str,
    summary: str,
    model: type[BaseModel],
    errors: dict[int | str, dict[str, Any]] | None = None,
    **more: Any,
) -> Callable[[F], F]:
    """The `router` route for `method` (GET, POST, ...) at `path`: its `summary`, the
    `model` of its reply, and the error replies it may give: those of every route
    (`ERRORS`), then its own `errors`; `more` as `APIRouter.api_route` takes it."""
    responses = {**ERRORS, **(errors or {})}
    return router.api_route(
        path, methods=[method], summary=summary, response_model=model, responses=responses, **more
    )


# --- answers ---


@router.post(
    "/ask",
    summary="Answer a question with verbatim quotes",
    response_description="The answer JSON (`quoteproof.answer/1`), as `ask --format json`",
    responses={**ERRORS, 200: {"content": {"application/json": {"schema": {"type": "object"}}}}},
)
def ask(body: AskRequest, who: PrincipalDep, state: StateDep) -> JSONResponse:
    """Answer `question` from the key's collections (or the subset named in
    `collections`). The answer is recorded in the audit log; `Location` and
    `X-Answer-Id` name the entry (`GET /v1/answers/{id}`)."""
    options = AnswerOptions(**body.model_dump(exclude={"question", "collections"}))
    view = state.view(who)
    asked = view.ask(body.question, state.backend(), options, collections=body.collections)
    entry_id = asked.entry.entry_id
    return JSONResponse(
        view.sealed_answer(asked),
        headers={"Location": f"/v1/answers/{entry_id}", "X-Answer-Id": entry_id},
    )


@_route("GET", "/answers/{answer_id}", "An answer from the audit log", AnswerRecordBody)
def get_answer(answer_id: str, who: PrincipalDep, state: StateDep) -> dict[str, Any]:
    """Return a recorded answer; 404 unless the key may see every collection it was
    asked over."""
    view = state.view(who)
    entry = view.entry(answer_id)
    if entry is None:
        raise _not_found()
    return {
        "id": entry.entry_id,
        "time": entry.time,
        "user": entry.user,
        "collections": list(entry.collections),
        "answer": view.sealed_record(entry),
    }


@_route(
    "POST",
    "/verify",
    "Re-check a saved answer: its quotes and its seal",
    VerifyBody,
    {400: {"model": ErrorBody, "description": "Not an answer JSON"}},
)
def verify(
    answer: Annotated[dict[str, Any], Body(description="An answer JSON (`quoteproof.answer/1`)")],
    who: PrincipalDep,
    state: StateDep,
) -> dict[str, Any]:
    """Check every quote (and cited passage) of `answer` against the index, and the
    answer as a whole against its seal, as `quoteproof verify` does. Documents of
    collections the key lacks count as absent."""
    try:
        check = state.view(who).verify_saved(answer)
    except ValueError as exc:
        raise HTTPException(400, f"not a valid answer: {exc}") from exc
    if not check.valid:
        state.metrics.verify_failed(who.collections)
    return {
        "valid": check.valid,
        "quotes": [
            {
                "quote_id": quote.quote_id,
                "ref": quote.ref,
                "valid": quote.valid,
                "problems": list(quote.problems),
                "cited": quote.cited,
                "notes": list(quote.notes),
            }
            for quote in check.quotes
        ],
        "answer": {
            "sealed": check.seal.sealed,
            "problems": list(check.seal.problems),
            "notes": list(check.seal.notes),
        },
    }


# --- search and sources ---


@_route("GET", "/search", "Search the key's documents", SearchBody)
def search(
    who: PrincipalDep,
    state: StateDep,
    q: Annotated[str, Query(min_length=1, max_length=MAX_QUESTION_CHARS, description="The query")],
    top_k: Annotated[int, Query(ge=1, le=MAX_TOP_K)] = DEFAULT_SEARCH_TOP_K,
    collection: Annotated[
        list[str] | None, Query(description="Only these collections (repeat for several)")
    ] = None,
) -> dict[str, Any]:
    """Return the best `top_k` chunks for `q`, with their text, and the best `top_k`
    knowledge-graph triplets it names (`facts`, imported, never quotes), both from
    the key's collections (or those of them named in `collection`)."""
    view = state.view(who)
    hits = view.search(q, top_k=top_k, collections=collection)
    facts = view.search_facts(q, top_k=top_k, collections=collection)
    return {
        "query": q,
        "hits": [hit_to_dict(hit, with_text=True) for hit in hits],
        "facts": [fact_hit_to_dict(fact) for fact in facts],
    }


@_route(
    "GET",
    "/sources/{doc_id}",
    "A span of a stored document",
    SourceBody,
    {400: {"model": ErrorBody, "description": "Offsets out of range"}},
)
def source(
    doc_id: str,
    who: PrincipalDep,
    state: StateDep,
    version: Annotated[int | None, Query(ge=1, description="Default: the newest")] = None,
    start: Annotated[int | None, Query(description="Default: 0")] = None,
    end: Annotated[int | None, Query(description="Default: the end of the text")] = None,
    context: Annotated[int, Query(ge=0, le=MAX_CONTEXT)] = 200,
) -> dict[str, Any]:
    """Return `text[start:end]` of a document version with `context` characters
    around it, its pages and (PDF) boxes."""
    view = state.view(who)
    span = view.span(doc_id, version, start, end)
    if span is None:
        raise _not_found()
    location = view.locate(span)
    document, text, start, end = span.document, span.document.text, span.start, span.end
    return {
        "doc_id": document.doc_id,
        "version": document.version,
        "title": document.title,
        "source_path": document.source_path,
        "format": document.format,
        "collection": document.collection,
        "sha256": document.sha256,
        "length": len(text),
        "start": start,
        "end": end,
        "text": span.text,
        "before": text[max(0, start - context) : start],
        "after": text[end : end + context],
        "pages": list(location.pages) if location.pages else None,
        "boxes": [
            {"page": b.page, "x0": b.x0, "y0": b.y0, "x1": b.x1, "y1": b.y1} for b in location.boxes
        ],
        "ocr": location.ocr,
    }


# --- documents and ingest jobs ---


@_route("GET", "/documents", "The key's documents", DocumentsBody)
def list_documents(
    who: PrincipalDep,
    state: StateDep,
    collection: Annotated[
        list[str] | None, Query(description="Only these collections (repeat for several)")
    ] = None,
) -> dict[str, Any]:
    """List the current version of every document the key may see, by source path."""
    summaries = state.view(who).documents(collection)
    return {
        "documents": [
            {
                "doc_id": s.doc_id,
                "version": s.version,
                "source_path": s.source_path,
                "title": s.title,
                "format": s.format,
                "sha256": s.sha256,
                "collection": s.collection,
            }
            for s in summaries
        ]
    }


@_route("DELETE", "/documents/{doc_id}", "Retire a document", RetiredBody)
def retire(doc_id: str, who: PrincipalDep, state: StateDep) -> dict[str, Any]:
    """Take a document out of search and listing; its stored versions stay readable
    (old answers still verify)."""
    if not state.view(who).retire(doc_id):
        raise _not_found()
    return {"doc_id": doc_id, "retired": True}


def safe_name(raw: str | None) -> str:
    """The file name to store an upload under: the last component of `raw` (either
    separator), control and format characters (NUL, bidi overrides) replaced by
    `_`, at most `MAX_NAME_CHARS` long (suffix kept). Raises `HTTPException` 400
    for a missing, empty or dots-only name."""
    name = re.split(r"[\\/]", raw or "")[-1]
    name = "".join(
        "_" if unicodedata.category(c) in ("Cc", "Cf") else c
        for c in unicodedata.normalize("NFC", name)
    ).strip()
    if not name or set(name) == {"."}:
        raise HTTPException(400, f"unusable file name {raw!r}")
    if len(name) > MAX_NAME_CHARS:
        suffix = Path(name).suffix[:20]
        name = name[: MAX_NAME_CHARS - len(suffix)] + suffix
    return name


def upload_path(upload_dir: Path, name: str) -> Path:
    """`upload_dir/<uuid4>/<name>`, checked to lie inside `upload_dir` (400 if not)."""
    path = upload_dir / uuid.uuid4().hex / name
    if not path.resolve().is_relative_to(upload_dir.resolve()) or path.parent.parent != upload_dir:
        raise HTTPException(400, f"unusable file name {name!r}")
    return path


async def _checked_files(items: list[UploadFile]) -> list[tuple[str, UploadFile]]:
    """The safe names of uploaded files after checking their types; 415 naming every
    file of an unsupported suffix or whose content is another kind of file, with its
    cause, and that nothing of the upload was stored."""
    checked, problems = [], []
    for item in items:
        name = safe_name(item.filename)
        head = await item.read(SNIFF_BYTES)
        await item.seek(0)
        problem = upload_problem(name, head)
        if problem is not None:
            problems.append(problem)
        checked.append((name, item))
    if problems:
        them = "them" if len(problems) > 1 else "it"
        others = f" (nothing of this upload was stored: upload the other files without {them})"
        raise HTTPException(415, "; ".join(problems) + (others if len(items) > 1 else ""))
    return checked


def _store_and_submit(
    files: list[tuple[str, UploadFile]], state: AppState, collection: str, user: str | None
) -> Job:
    """Write the uploads under the upload folder, each in a new folder, and submit
    their ingest job (its record is durable when this returns). When the disk is
    full or a write fails otherwise, nothing of the upload is kept: 507 (no space)
    or 500, with the cause."""
    stored: list[Path] = []
    try:
        for name, item in files:
            path = upload_path(state.upload_dir, name)
            stored.append(path)
            path.parent.mkdir(parents=True)
            with path.open("xb") as out:
                shutil.copyfileobj(item.file, out)
        return state.jobs.submit(stored, collection, user)
    except OSError as exc:
        for path in stored:
            path.unlink(missing_ok=True)
            with contextlib.suppress(OSError):
                path.parent.rmdir()
        status = 507 if exc.errno in (errno.ENOSPC, errno.EDQUOT) else 500
        cause = exc.strerror or str(exc)
        raise HTTPException(
            status, f"the upload could not be stored: {cause} (nothing of it was kept)"
        ) from exc


_UPLOAD_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file"],
                    "properties": {
                        "file": {
                            "type": "array",
                            "items": {"type": "string", "format": "binary"},
                            "description": "One or more files (repeat the field)",
                        },
                        "collection": {"type": "string", "default": DEFAULT_COLLECTION},
                    },
                }
            }
        },
    }
}


@_route(
    "POST",
    "/documents",
    "Upload files to ingest",
    JobBody,
    {
        400: {"model": ErrorBody, "description": "No file, a bad name or collection"},
        413: {"model": ErrorBody, "description": "Larger than the upload limit"},
        415: {"model": ErrorBody, "description": "Unsupported or mislabelled file"},
        507: {"model": ErrorBody, "description": "No room to store it (nothing kept)"},
    },
    status_code=202,
    openapi_extra=_UPLOAD_BODY,
)
async def upload(
    request: Request, response: Response, who: PrincipalDep, state: StateDep
) -> dict[str, Any]:
    """Store the files of a multipart upload (fields `file`, repeated, and
    `collection`, default `default`) and ingest them in the background: poll
    `GET /v1/jobs/{job}`. Every file is checked before any is stored; the whole
    request may carry at most the server's upload limit."""
    form = await read_upload_form(request)
    try:
        job = await ingest_upload(form, who, state)
    finally:
        await form.close()
    response.headers["Location"] = f"/v1/jobs/{job.id}"
    return job.snapshot()


async def read_upload_form(request: Request) -> FormData:
    """The multipart form of an upload request (at most `MAX_FILES_PER_UPLOAD`
    files and fields); the caller closes it. Its size is limited before it is read
    (`server.body_limit`: the upload routes are `UPLOAD_ROUTES`)."""
    return await request.form(max_files=MAX_FILES_PER_UPLOAD, max_fields=MAX_FILES_PER_UPLOAD)


async def ingest_upload(form: FormData, who: Principal, state: AppState) -> Job:
    """Check the upload `form` (its collection, which `who` must be allowed to write,
    and every file's name and type), store its files and submit their ingest job.
    Raises `HTTPException` (400, 403, 415) before storing anything, 507 or 500
    when storing fails (then nothing is kept)."""
    try:
        collection = state.view(who).upload_collection(form.get("collection"))
    except AccessDeniedError as exc:
        raise HTTPException(403, str(exc)) from exc
    except UsageError as exc:
        raise HTTPException(400, str(exc)) from exc
    items = [item for _, item in form.multi_items() if isinstance(item, UploadFile)]
    if not items:
        raise HTTPException(400, "no file uploaded (multipart field 'file')")
    checked = await _checked_files(items)
    # The files, and the job's journal record, are written before the 202: off the
    # event loop.
    return await run_in_threadpool(_store_and_submit, checked, state, collection, who.name)


@_route("GET", "/jobs/{job_id}", "Progress of an ingest job", JobBody)
def get_job(job_id: str, who: PrincipalDep, state: StateDep) -> dict[str, Any]:
    """Return an upload's ingest progress; 404 for another collection's job."""
    job = state.view(who).job(state.jobs.get, job_id)
    if job is None:
        raise _not_found()
    return job.snapshot()


# --- service ---


@router.get("/health", summary="Liveness and document count", response_model=HealthBody)
def health(
    state: StateDep, who: Annotated[Principal | None, Depends(optional_principal)]
) -> dict[str, Any]:
    """`{"status": "ok", "documents": N}`; needs no key (N only with one)."""
    state.index()  # a missing index is answered 503, with a key or without
    return {
        "status": "ok",
        "documents": None if who is None else state.view(who).document_count(),
    }


@router.get("/version", summary="Server and answer-schema versions", response_model=VersionBody)
def version() -> dict[str, Any]:
    """The quoteproof version, the answer JSON schema and the API version."""
    told = about.versions()
    return {"version": told.version, "answer_schema": told.answer_schema, "api": "v1"}
