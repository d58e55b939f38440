"""The application service every face calls: the CLI, the HTTP API, the web page and
the MCP server only translate their input and output.

`ScopedIndex(index, principal)` is the index as one principal sees it: asking (the
answer recorded in the audit log), searching, quoting a passage, documents, sources
and spans of them, verifying, recorded answers and the audit history, uploads and
ingest jobs, each limited to the principal's collections (`Principal`). Every face
checks a question with the one rule `check_question`. `make_backend` makes the
backend a `BackendSpec` names; `mode_choices` says which answer modes it offers.
`options` holds what a face makes its options of (the registries of backends and
modes, the answer options and retrieval settings).

Imported from their modules, so that a question loads neither: `admin.Admin`, the
operator's side (API keys, authentication, the audit log as a whole), and
`uploads` (the file types an upload may hold and what refuses one).

Each name below is imported from its module when it is first asked for (`EXPORTS`,
`__getattr__`): importing the package, which importing any of its modules does
first, loads none of the library, so the CLI reads `options` at start-up without
loading the index.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from quoteproof.answer_timing import AnswerTiming
    from quoteproof.closing import ClosedOnExit
    from quoteproof.llm.base import Backend
    from quoteproof.llm.registry import make_backend
    from quoteproof.retrieval.retriever import RetrievalNotice
    from quoteproof.service.catalog import (
        CONTEXT_CHOICES,
        ContextChoice,
        ModeChoice,
        context_forms,
        context_help,
        mode_choices,
    )
    from quoteproof.service.inputs import read_labelled, read_queries, read_saved_answer
    from quoteproof.service.options import (
        AnswerOptions,
        BackendSpec,
        RetrievalSettings,
        RetrieverName,
        mode_help,
        modes,
    )
    from quoteproof.service.principal import ANONYMOUS, Principal
    from quoteproof.service.questions import MAX_QUESTION_CHARS, QuestionError, check_question
    from quoteproof.service.view import Asked, ScopedIndex, Span, SpanError
    from quoteproof.store.base import ApiKey, AuditEntry, DocumentSummary, check_collection_name
    from quoteproof.strategies.options import answer_field_types
    from quoteproof.streaming import (
        AnswerEvent,
        DataComputed,
        ProseDelta,
        QuoteDropped,
        QuoteResolved,
        StageStarted,
    )
    from quoteproof.terms import well_formed

EXPORTS: dict[str, tuple[str, ...]] = {
    "quoteproof.answer_timing": ("AnswerTiming",),
    "quoteproof.closing": ("ClosedOnExit",),
    "quoteproof.llm.base": ("Backend",),
    "quoteproof.llm.registry": ("make_backend",),
    "quoteproof.retrieval.retriever": ("RetrievalNotice",),
    "quoteproof.service.catalog": (
        "CONTEXT_CHOICES",
        "ContextChoice",
        "ModeChoice",
        "context_forms",
        "context_help",
        "mode_choices",
    ),
    "quoteproof.service.inputs": ("read_labelled", "read_queries", "read_saved_answer"),
    "quoteproof.service.options": (
        "AnswerOptions",
        "BackendSpec",
        "RetrievalSettings",
        "RetrieverName",
        "mode_help",
        "modes",
    ),
    "quoteproof.service.principal": ("ANONYMOUS", "Principal"),
    "quoteproof.service.questions": ("MAX_QUESTION_CHARS", "QuestionError", "check_question"),
    "quoteproof.service.view": ("Asked", "ScopedIndex", "Span", "SpanError"),
    "quoteproof.store.base": ("ApiKey", "AuditEntry", "DocumentSummary", "check_collection_name"),
    "quoteproof.strategies.options": ("answer_field_types",),
    "quoteproof.streaming": (
        "AnswerEvent",
        "DataComputed",
        "ProseDelta",
        "QuoteDropped",
        "QuoteResolved",
        "StageStarted",
    ),
    "quoteproof.terms": ("well_formed",),
}
"""The package's names, by the module each is imported from (the imports above, for
the type checker, are the same)."""

_MODULE_OF = {name: module for module, names in EXPORTS.items() for name in names}

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

if not TYPE_CHECKING:  # the type checker reads the imports above: a name not there is an error

    def __getattr__(name: str) -> Any:
        """The package's name `name` (`EXPORTS`), imported from its module and kept
        as the package's attribute; AttributeError for any other name (so that
        `from quoteproof.service import admin` imports the submodule)."""
        if name not in _MODULE_OF:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(_MODULE_OF[name]), name)
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        """The package's attributes, its names not yet imported included."""
        return sorted(set(globals()) | set(__all__))
