"""The bodies of the JSON API (`server.api`): its requests and replies, for
validation and the OpenAPI schema. `AskRequest` is made from `AnswerOptions`,
`FactHitBody` from `render.hits.FactHit` and `DocumentBody` from `DocumentSummary`,
so each field is declared once."""

from __future__ import annotations

from dataclasses import fields
from typing import TYPE_CHECKING, Any, Literal, get_type_hints

from pydantic import BaseModel, Field, create_model

from quoteproof.render.hits import FactHit
from quoteproof.service import (
    MAX_QUESTION_CHARS,
    AnswerOptions,
    DocumentSummary,
    answer_field_types,
    mode_help,
)

MAX_TOP_K = 100
"""The most hits or sources a request may ask for."""


class ErrorBody(BaseModel):
    """Every error: a one-line message."""

    error: str


ASK_LIMITS = {"max_steps": 50, "top_k": MAX_TOP_K}
"""The most a request may ask for, per answer option (the CLI sets no such limit)."""
SERVER_KEEPS = ("threshold",)
"""The answer options a request does not set: the server keeps their defaults."""


def _ask_request() -> type[BaseModel]:
    """The body of `POST /v1/ask`: a question, how to answer it (the fields of
    `AnswerOptions` by the same names, with their defaults, help and bounds, but
    `SERVER_KEEPS`; `mode`'s help from the mode registry; `ASK_LIMITS`) and the
    collections to answer from."""
    types = answer_field_types()
    answer: dict[str, Any] = {}
    for option in fields(AnswerOptions):
        if option.name in SERVER_KEEPS:
            continue
        text = option.metadata["option"]
        help = mode_help() if option.name == "mode" else text.help
        most = ASK_LIMITS.get(option.name, text.maximum)
        bounds = Field(option.default, description=help, ge=text.minimum, le=most)
        answer[option.name] = (types[option.name], bounds)
    collections = Field(
        None,
        description="Only these collections (each must be the key's); default: all of the key's.",
    )
    return create_model(
        "AskRequest",
        __doc__="A question, and how to answer it (the fields of `AnswerOptions` by the same\n"
        "names, but the quote match threshold, which the server keeps at its default).",
        question=(str, Field(min_length=1, max_length=MAX_QUESTION_CHARS)),
        **answer,
        collections=(list[str] | None, collections),
    )


if TYPE_CHECKING:

    class AskRequest(BaseModel):
        """The body of `POST /v1/ask` (made by `_ask_request`)."""

        question: str
        collections: list[str] | None

else:
    AskRequest = _ask_request()


class HitBody(BaseModel):
    """One search hit (as `quoteproof search --format json`)."""

    ref: str
    doc_id: str
    source_path: str
    score: float
    rank: int
    label: str
    text: str


def _required_body(name: str, doc: str, source: type) -> type[BaseModel]:
    """A body named `name` (docstring `doc`) with the annotated fields of `source`
    (a dataclass or TypedDict), in their order, each required."""
    required: dict[str, Any] = {
        field: (kind, ...) for field, kind in get_type_hints(source).items()
    }
    return create_model(name, __doc__=doc, **required)


if TYPE_CHECKING:

    class FactHitBody(BaseModel):
        """A fact of `GET /v1/search`: the fields of `render.hits.FactHit`, each
        required (made by `_required_body`)."""

else:
    FactHitBody = _required_body(
        "FactHitBody",
        "A knowledge-graph triplet the query names (as a fact of `quoteproof search\n"
        "--format json`): an imported fact, never a quote. `match` says how it was found\n"
        "(exact, normalized, fuzzy or hop, through `entity`); `graph_file` and `row` are\n"
        "where it was imported from; `claimed_quote` is the supporting words its graph\n"
        "file claims, unchecked, never to be shown as a quotation.",
        FactHit,
    )


class SearchBody(BaseModel):
    """The passages a query finds, best first, then the knowledge-graph triplets it
    names (`facts`: empty when no graph of the key's collections has them)."""

    query: str
    hits: list[HitBody]
    facts: list[FactHitBody]


if TYPE_CHECKING:

    class DocumentBody(BaseModel):
        """A document of `GET /v1/documents`: the fields of `DocumentSummary`, each
        required (made by `_required_body`)."""

else:
    DocumentBody = _required_body(
        "DocumentBody", "The current version of a document, without its text.", DocumentSummary
    )


class DocumentsBody(BaseModel):
    documents: list[DocumentBody]


class FileResultBody(BaseModel):
    path: str
    status: str
    error: str | None
    doc_id: str | None
    version: int | None


class JobBody(BaseModel):
    """An ingest job: `state` is queued, running, done (every file tried; see each
    file's `status`) or failed (the job itself failed: `error`)."""

    job: str
    state: Literal["queued", "running", "done", "failed"]
    collection: str
    total: int
    done: int
    results: list[FileResultBody]
    error: str | None
    created: str
    finished: str | None


class RetiredBody(BaseModel):
    doc_id: str
    retired: bool


class AnswerRecordBody(BaseModel):
    """An answer from the audit log: its id, when and by whom it was asked, over
    which collections (`*`: the whole index), and the answer JSON."""

    id: str
    time: str
    user: str | None
    collections: list[str]
    answer: dict[str, Any]


class CheckBody(BaseModel):
    """The verdict on one quote (`cited`: a passage cited by prose); `notes` say
    when its document version has since been superseded or retired."""

    quote_id: str
    ref: str
    valid: bool
    problems: list[str]
    cited: bool
    notes: list[str]


class SealBody(BaseModel):
    """The verdict on the answer as a whole: `sealed` is false for an answer without
    a seal (only its quotes were checked); `problems` list every change found since
    it was made (each changed field named); `notes` what was not checked."""

    sealed: bool
    problems: list[str]
    notes: list[str]


class VerifyBody(BaseModel):
    """`valid`: every quote matches the index and the seal shows no change."""

    valid: bool
    quotes: list[CheckBody]
    answer: SealBody


class BoxBody(BaseModel):
    """A rectangle on a page (1-based) in PDF points, origin bottom-left."""

    page: int
    x0: float
    y0: float
    x1: float
    y1: float


class SourceBody(BaseModel):
    """A span of a stored document version, with context and location."""

    doc_id: str
    version: int
    title: str
    source_path: str
    format: str
    collection: str
    sha256: str
    length: int
    start: int
    end: int
    text: str
    before: str
    after: str
    pages: list[int] | None
    boxes: list[BoxBody]
    ocr: bool


class HealthBody(BaseModel):
    """`documents`: how many current documents the presented key may see (all of
    them without auth); null when no valid key is presented."""

    status: str
    documents: int | None


class VersionBody(BaseModel):
    version: str
    answer_schema: str
    api: str


ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "No valid API key"},
    403: {"model": ErrorBody, "description": "A collection the key lacks"},
    404: {"model": ErrorBody, "description": "No such item (or another collection's)"},
}
"""The error replies every route may give, for the OpenAPI schema."""
