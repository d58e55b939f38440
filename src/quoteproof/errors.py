"""The exception tree of quoteproof.

    QuoteproofError
    ├── UsageError           bad input from the user: an unknown mode, an invalid
    │   │                    collection name, options that contradict each other
    │   └── BackendConfigError   the options cannot make a backend (no model name, no key)
    │       └── ModeUnavailableError  the backend cannot run the answer mode asked for
    ├── IngestError          a file could not be ingested (names the file and the cause)
    ├── IndexNotFoundError   no index at the given location
    ├── StoreError           the index is unusable (schema too new, corrupt, ...)
    │   └── UnfinishedIngestError  an ingest into it did not finish: no questions yet
    ├── RetrievalError       retrieval cannot run as asked (no dense extra, bad model)
    ├── TableError           a table query cannot run (unknown table, column or pointer)
    ├── EvalSetError         an evaluation set cannot be read (evaluation.evalset)
    ├── ReportError          an evaluation report cannot be written or read (evaluation.report)
    ├── AccessDeniedError    a principal asked for a collection it may not see
    └── BackendError         the language model could not answer
        └── BackendUnavailableError   the model server cannot be reached

Messages name no command-line option: an error that a setting would fix carries a
`Hint` and the `facts` its wording needs, and each front end (the CLI, the HTTP API,
the web page) says it in its own terms. A `UsageError` is also a `ValueError`, so
callers that caught ValueError for bad input still do; a bare ValueError is left
for programming errors. The CLI turns every `QuoteproofError` into a one-line
message; library users catch the class that matters to them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from enum import StrEnum

_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"  # what str.splitlines splits at
_LINE_BREAK = re.compile(rf"\s*[{_BREAKS}]\s*")
_LINE_BREAK_BEFORE_MARK = re.compile(rf"\s*[{_BREAKS}]\s*(?=[,.;:)])")


class Hint(StrEnum):
    """What would fix an error, for a front end to phrase (`QuoteproofError.hint`).
    The facts each hint comes with are listed beside it."""

    INGEST_FIRST = "ingest_first"
    """No index yet: ingest documents into it (location)."""
    CHOOSE_SERVER = "choose_server"
    """The model server cannot be reached: start it or choose another (url)."""
    ONE_SERVER = "one_server"
    """A server URL and the provider's cloud were both chosen: keep one."""
    NAME_SERVER = "name_server"
    """The backend has no default server: name one or choose the cloud
    (backend, variable)."""
    NAME_MODEL = "name_model"
    """The backend needs a model name (backend)."""
    API_KEY = "api_key"
    """The backend needs an API key (backend, variable)."""
    GRAMMAR_BACKEND = "grammar_backend"
    """Grammars were asked of a backend that cannot take them (backend, takes: the
    backends that can, "openai or local")."""
    BUNDLED_MODEL = "bundled_model"
    """The local backend has no model file and the bundled one is missing (install)."""
    LOCAL_EXTRA = "local_extra"
    """The local backend's library is missing (install)."""
    DENSE_EXTRA = "dense_extra"
    """Dense retrieval was asked for without the dense extra (retriever, install)."""
    NO_VECTORS = "no_vectors"
    """Dense retrieval was asked of an index without vectors (retriever, location)."""
    MODE_NEEDS_MODEL = "mode_needs_model"
    """The answer mode needs a language model and none is configured (mode)."""
    FINISH_INGEST = "finish_ingest"
    """An ingest did not finish: run one again (location)."""
    NEED_COLLECTION = "need_collection"
    """An API key was asked for without a collection."""
    LONGER_TIMEOUT = "longer_timeout"
    """A model request ran out of time: allow it longer (url, seconds)."""
    DOCUMENT_NEEDS_WHOLE = "document_needs_whole"
    """One document was named for the context, which is not the whole corpus."""
    AGENT_CONTEXT = "agent_context"
    """The agent mode was asked to take a context form other than paragraphs."""
    RATIONALE_CONTEXT = "rationale_context"
    """The rationale mode was asked to take triplets alone as its context."""


class QuoteproofError(Exception):
    """Base class of every error quoteproof raises on purpose.

    `str(exc)` is a complete message in the library's words; `hint` (or None) says
    what would fix it and `facts` hold the values a front end needs to say so.
    """

    def __init__(
        self, message: str = "", *, hint: Hint | None = None, facts: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.hint = hint
        self.facts: dict[str, str] = dict(facts or {})


class UsageError(QuoteproofError, ValueError):
    """Bad input from the user: an empty or unknown value, an invalid name, options
    that cannot go together. The CLI exits 2 on it."""


class IngestError(QuoteproofError):
    """A file could not be ingested. `path` names the file, `cause` says why, on one
    line: a line break in the cause given (libxml2 ends its messages with one) becomes
    a space, or nothing before a punctuation mark."""

    def __init__(self, path: str, cause: str) -> None:
        cause = _LINE_BREAK.sub(" ", _LINE_BREAK_BEFORE_MARK.sub("", cause.strip()))
        super().__init__(f"{path}: {cause}")
        self.path = path
        self.cause = cause


class IndexNotFoundError(QuoteproofError):
    """No index exists at `location` (and creating one was not asked for)."""

    def __init__(self, location: str) -> None:
        super().__init__(
            f"no index at {location}", hint=Hint.INGEST_FIRST, facts={"location": location}
        )
        self.location = location


class StoreError(QuoteproofError):
    """The index exists but cannot be used as it is."""


class UnfinishedIngestError(StoreError):
    """An ingest into the index at `location`, started at `started`, did not finish
    (interrupted, or stopped by an error before its vectors and refusal threshold
    were computed): the index answers no question until an ingest finishes."""

    def __init__(self, location: str, started: str) -> None:
        super().__init__(
            f"index {location}: the ingest started at {started} did not finish, so its "
            "vectors and refusal threshold may not match its documents; it answers no "
            "question until an ingest into it finishes",
            hint=Hint.FINISH_INGEST,
            facts={"location": location},
        )
        self.location = location
        self.started = started


class BackendError(QuoteproofError):
    """The language model backend failed to produce a completion."""


class BackendUnavailableError(BackendError):
    """The model server at `url` could not be reached (down, wrong URL, timed out)."""

    def __init__(self, url: str, cause: str) -> None:
        super().__init__(
            f"cannot reach the model server at {url}: {cause}",
            hint=Hint.CHOOSE_SERVER,
            facts={"url": url},
        )
        self.url = url


class BackendTimeoutError(BackendError):
    """The model server at `url` did not finish its reply within the time one
    request may take (`seconds`, from sending it to the reply's last byte)."""

    def __init__(self, url: str, seconds: float) -> None:
        super().__init__(
            f"the model server at {url} sent no complete reply within {seconds:g} s",
            hint=Hint.LONGER_TIMEOUT,
            facts={"url": url, "seconds": f"{seconds:g}"},
        )
        self.url = url


class RetrievalError(QuoteproofError):
    """Retrieval cannot run as asked (dense extra missing, a model that will not load,
    an index without vectors for dense search)."""


class RetrievalNotice(UserWarning):
    """Retrieval runs differently from what a user might assume (e.g. BM25 alone)."""


class TableError(QuoteproofError):
    """A table query or aggregate cannot run as asked: unknown or ambiguous table,
    unknown column or pointer, a value that is not a number where one is needed, or
    a stored table that no longer parses."""


class AccessDeniedError(QuoteproofError):
    """A principal asked to read a collection it may not see (`service.Principal`)."""


class BackendConfigError(UsageError):
    """The options given cannot make a working backend (no model name, no API key)."""


class ModeUnavailableError(BackendConfigError):
    """The backend cannot run the answer mode asked for (a mode that needs a language
    model, asked of the `extractive` backend). `mode` names it."""

    def __init__(self, mode: str) -> None:
        super().__init__(
            f"mode {mode} needs a language model, and none is configured here: "
            "without one, only quote answers (quotes chosen by retrieval) can be made",
            hint=Hint.MODE_NEEDS_MODEL,
            facts={"mode": mode},
        )
        self.mode = mode


def undecodable_cause(charset: str, raw: bytes, error: UnicodeDecodeError) -> str:
    """The `IngestError` cause for bytes `raw` that `charset` cannot decode (`error`):
    where ("not valid UTF-8 (byte offset 3: 0xE9, line 1)"), then what to do: save
    the file as UTF-8. When UTF-8 failed and the bytes read as Windows-1252, the
    advice says the file may be Latin-1 or Windows-1252 text; quoteproof itself never
    guesses an encoding."""
    offset = error.start
    line = raw.count(b"\n", 0, offset) + 1
    where = f"byte offset {offset}: 0x{raw[offset]:02X}, line {line}"
    advice = "save it as UTF-8 and ingest it again"
    if charset == "utf-8" and _decodes(raw, "cp1252"):
        advice = f"it may be Latin-1 or Windows-1252 text: {advice}"
    return f"not valid {charset.upper()} ({where}); {advice}"


def _decodes(raw: bytes, charset: str) -> bool:
    """Whether `raw` decodes as `charset` without error."""
    try:
        raw.decode(charset)
    except UnicodeDecodeError:
        return False
    return True
