"""The application service every face calls: the CLI, the HTTP API, the web page and
the MCP server only translate their input and output.

`ScopedIndex(index, principal)` is the index as one principal sees it: asking (the
answer recorded in the audit log), searching, documents and sources, verifying and
the audit history, each limited to the principal's collections (`Principal`).
"""

from quoteproof.llm.registry import BackendSpec, make_backend
from quoteproof.service.principal import ANONYMOUS, Principal
from quoteproof.service.view import AnswerOptions, Asked, ScopedIndex

__all__ = [
    "ANONYMOUS",
    "AnswerOptions",
    "Asked",
    "BackendSpec",
    "Principal",
    "ScopedIndex",
    "make_backend",
]
