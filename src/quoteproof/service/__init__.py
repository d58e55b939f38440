"""The application service every face calls: the CLI, the HTTP API, the web page and
the MCP server only translate their input and output.

`ScopedIndex(index, principal)` is the index as one principal sees it: asking (the
answer recorded in the audit log), searching, quoting a passage, documents, sources
and spans of them, verifying, recorded answers and the audit history, uploads and
ingest jobs, each limited to the principal's collections (`Principal`). Every face
checks a question with the one rule `check_question`. `make_backend` makes the
backend a `BackendSpec` names; `mode_choices` says which answer modes it offers.

Imported from their modules, so that a question loads neither: `admin.Admin`, the
operator's side (API keys, authentication, the audit log as a whole), and
`uploads` (the file types an upload may hold and what refuses one).
"""

from quoteproof.answer_timing import AnswerTiming
from quoteproof.closing import ClosedOnExit
from quoteproof.llm.base import Backend
from quoteproof.llm.registry import BackendSpec, make_backend
from quoteproof.retrieval.retriever import RetrievalNotice, RetrievalSettings, RetrieverName
from quoteproof.service.catalog import (
    CONTEXT_CHOICES,
    ContextChoice,
    ModeChoice,
    context_forms,
    context_help,
    mode_choices,
    mode_help,
    modes,
)
from quoteproof.service.inputs import read_labelled, read_queries, read_saved_answer
from quoteproof.service.principal import ANONYMOUS, Principal
from quoteproof.service.questions import MAX_QUESTION_CHARS, QuestionError, check_question
from quoteproof.service.view import Asked, ScopedIndex, Span, SpanError
from quoteproof.store.base import ApiKey, AuditEntry, DocumentSummary, check_collection_name
from quoteproof.strategies.options import AnswerOptions, answer_field_types
from quoteproof.streaming import (
    AnswerEvent,
    DataComputed,
    ProseDelta,
    QuoteDropped,
    QuoteResolved,
    StageStarted,
)
from quoteproof.terms import well_formed

__all__ = [
    "ANONYMOUS",
    "CONTEXT_CHOICES",
    "MAX_QUESTION_CHARS",
    "AnswerEvent",
    "AnswerOptions",
    "AnswerTiming",
    "ApiKey",
    "Asked",
    "AuditEntry",
    "Backend",
    "BackendSpec",
    "ClosedOnExit",
    "ContextChoice",
    "DataComputed",
    "DocumentSummary",
    "ModeChoice",
    "Principal",
    "ProseDelta",
    "QuestionError",
    "QuoteDropped",
    "QuoteResolved",
    "RetrievalNotice",
    "RetrievalSettings",
    "RetrieverName",
    "ScopedIndex",
    "Span",
    "SpanError",
    "StageStarted",
    "answer_field_types",
    "check_collection_name",
    "check_question",
    "context_forms",
    "context_help",
    "make_backend",
    "mode_choices",
    "mode_help",
    "modes",
    "read_labelled",
    "read_queries",
    "read_saved_answer",
    "well_formed",
]
