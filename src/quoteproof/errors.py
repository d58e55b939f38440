"""The exception tree of quoteproof.

    QuoteproofError
    ├── IngestError          a file could not be ingested (names the file and the cause)
    ├── IndexNotFoundError   no index at the given location
    ├── StoreError           the index is unusable (schema too new, corrupt, ...)
    ├── RetrievalError       retrieval cannot run as asked (no dense extra, bad model)
    ├── TableError           a table query cannot run (unknown table, column or pointer)
    ├── EvalSetError         an evaluation set cannot be read (evaluation.evalset)
    ├── ReportError          an evaluation report cannot be written or read (evaluation.report)
    ├── AccessDeniedError    a principal asked for a collection it may not see
    ├── BackendConfigError   the options cannot make a backend (no model name, no key)
    │   └── ModeUnavailableError      the backend cannot run the answer mode asked for
    └── BackendError         the language model could not answer
        └── BackendUnavailableError   the model server cannot be reached

The CLI turns every `QuoteproofError` into a one-line message; library users catch
the class that matters to them.
"""

from __future__ import annotations


class QuoteproofError(Exception):
    """Base class of every error quoteproof raises on purpose."""


class IngestError(QuoteproofError):
    """A file could not be ingested. `path` names the file, `cause` says why."""

    def __init__(self, path: str, cause: str) -> None:
        super().__init__(f"{path}: {cause}")
        self.path = path
        self.cause = cause


class IndexNotFoundError(QuoteproofError):
    """No index exists at the location given (and creating one was not asked for)."""


class StoreError(QuoteproofError):
    """The index exists but cannot be used as it is."""


class BackendError(QuoteproofError):
    """The language model backend failed to produce a completion."""


class BackendUnavailableError(BackendError):
    """The model server could not be reached (down, wrong URL, timed out)."""


class RetrievalError(QuoteproofError):
    """Retrieval cannot run as asked (dense extra missing, a model that will not load,
    an index without vectors for dense search)."""


class TableError(QuoteproofError):
    """A table query or aggregate cannot run as asked: unknown or ambiguous table,
    unknown column or pointer, a value that is not a number where one is needed, or
    a stored table that no longer parses."""


class AccessDeniedError(QuoteproofError):
    """A principal asked to read a collection it may not see (`service.Principal`)."""


class BackendConfigError(QuoteproofError):
    """The options given cannot make a working backend (no model name, no API key)."""


class ModeUnavailableError(BackendConfigError):
    """The backend cannot run the answer mode asked for (a mode that needs a language
    model, asked of the `extractive` backend). `mode` names it."""

    def __init__(self, mode: str) -> None:
        super().__init__(
            f"mode {mode} needs a language model, and none is configured here: "
            "without one, only quote answers (quotes chosen by retrieval) can be made"
        )
        self.mode = mode
