"""Server configuration and the state one app shares between requests.

SQLite connections belong to the thread that opened them, so `AppState.index`
opens one `Index` per worker thread (`threading.local`); embedding and reranking
models are cached per process by the retrieval layer, so a second `Index` costs
only a store connection.

Nothing a request relies on lives only in this process, so several processes can
serve one index (`serve --workers N`, or hosts sharing a PostgreSQL database):
API keys, answers, the audit log and its head, and the refusal threshold are in
the index; ingest jobs are in the index too (`server.journal`); the web page's
form tokens are derived from the audit key (`AppState.form_secret`), which every
process signing the same audit log shares.
"""

from __future__ import annotations

import contextlib
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

from fastapi import Depends, Request

from quoteproof.index import DEFAULT_INDEX, Index
from quoteproof.ingest.files import DEFAULT_MAX_FILE_MB
from quoteproof.ingest.parsing import IngestSettings
from quoteproof.llm.base import Backend
from quoteproof.llm.registry import BackendSpec, make_backend
from quoteproof.retrieval.retriever import RetrievalSettings
from quoteproof.server.job_queue import Job
from quoteproof.server.jobs import DEFAULT_PARSE_TIMEOUT_S, DEFAULT_PARSE_WORKERS, JobManager
from quoteproof.server.journal import JOURNAL_FOLDER, JobJournal
from quoteproof.server.metrics import Metrics
from quoteproof.service import Principal, ScopedIndex
from quoteproof.service.admin import Admin
from quoteproof.store.audit_chain import keyed_signature
from quoteproof.store.open import is_postgres_url

DEFAULT_MAX_UPLOAD_MB = 50.0
DEFAULT_MAX_BODY_MB = 2.0
"""The most any request other than an upload may carry (a question, an answer JSON
to verify, a form): answers are kilobytes."""
INGEST_HOLD_ENV = "QUOTEPROOF_TEST_INGEST_HOLD"
"""For tests of `quoteproof serve`: a path; while that file exists, no uploaded file
starts ingesting (`ServerConfig.ingest_hold`). Unset, nothing changes."""
UPLOADS_FOLDER = "uploads"


@dataclass(frozen=True, kw_only=True)
class ServerConfig(BackendSpec):
    """How `quoteproof serve` runs.

    `index` is a directory (SQLite) or a `postgresql://` URL. With `auth` every
    request needs an API key; without it every request acts for everyone (only on
    a loopback address). The fields of `BackendSpec` (`llm`, `model`, ...) name the
    backend as they do for `quoteproof ask` (`llm.registry.make_backend`).
    `max_upload_mb` limits one upload request (its files together), `max_body_mb`
    every other request's body (`server.body_limit`). Uploads are stored under
    `upload_dir` (None: a folder `uploads` next to a directory index, a temporary
    folder for PostgreSQL); the ingest jobs are recorded there too (`.jobs`), so
    they resume after a restart. `embed` says whether uploads are embedded after
    ingest (None: when the dense extra is installed). `parse_workers` files are
    parsed at the same time, each for at most `parse_timeout_s` seconds;
    `ingest_hold` is for tests (while that file exists, no file starts ingesting).
    `metrics_dir` is the multiprocess directory of the metrics of a server of
    several processes (`server.metrics`; set by `serve --workers N`), None for one.
    With `allowed_hosts`, a
    request whose `Host` header names another host is refused (400); `serve
    --no-auth` sets the loopback names, against DNS rebinding. `audit_key` is the
    file of the key that signs the audit log (None: as `Index.open`).
    """

    index: str = DEFAULT_INDEX
    auth: bool = True
    max_upload_mb: float = DEFAULT_MAX_UPLOAD_MB
    max_body_mb: float = DEFAULT_MAX_BODY_MB
    retrieval: RetrievalSettings = field(default_factory=RetrievalSettings)
    upload_dir: Path | None = None
    embed: bool | None = None
    allowed_hosts: tuple[str, ...] | None = None
    audit_key: Path | None = None
    parse_workers: int = DEFAULT_PARSE_WORKERS
    parse_timeout_s: float = DEFAULT_PARSE_TIMEOUT_S
    ingest_hold: Path | None = None
    metrics_dir: Path | None = None


def default_upload_dir(index: str) -> Path:
    """Where uploads go when the configuration names no folder: `uploads` next to
    (beside, not inside) a directory index; a new temporary folder for PostgreSQL."""
    if is_postgres_url(index):
        return Path(tempfile.mkdtemp(prefix="quoteproof-uploads-"))
    location = Path(index).resolve()
    return location.parent / UPLOADS_FOLDER


class AppState:
    """What every request of one app shares: the configuration, the ingest jobs,
    the language-model backend, the secret of the web page's form tokens, and one
    open `Index` per thread."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.upload_dir = (config.upload_dir or default_upload_dir(config.index)).resolve()
        self.metrics = Metrics(config.metrics_dir)
        """The server's metrics (`GET /metrics`): every answer asked through `view`,
        every ingest job ended."""
        self.jobs = JobManager(
            self.open_index,
            JobJournal(self.upload_dir / JOURNAL_FOLDER, shared=lambda: self.index().store),
            config.embed,
            IngestSettings(max_file_mb=max(DEFAULT_MAX_FILE_MB, config.max_upload_mb)),
            workers=config.parse_workers,
            parse_timeout_s=config.parse_timeout_s,
            hold=config.ingest_hold,
            on_end=self._job_ended,
        )
        self._local = threading.local()
        self._opened: list[Index] = []
        self._lock = threading.Lock()
        self._backend: Backend | None = None
        self._form_secret: bytes | None = None

    def open_index(self) -> Index:
        """Open a new `Index` on the configured location (the caller closes it)."""
        return Index.open(
            self.config.index, retrieval=self.config.retrieval, audit_key=self.config.audit_key
        )

    def index(self) -> Index:
        """Return this thread's `Index`, opening it on first use."""
        idx: Index | None = getattr(self._local, "index", None)
        if idx is None:
            idx = self.open_index()
            self._local.index = idx
            with self._lock:
                self._opened.append(idx)
        return idx

    def view(self, who: Principal) -> ScopedIndex:
        """This thread's index as `who` sees it: every read and answer of a request
        goes through it (`service.ScopedIndex`); each answer is counted in the
        metrics."""
        return ScopedIndex(self.index(), who, observer=self.metrics.observe_answer)

    def _job_ended(self, job: Job, state: str) -> None:
        failed = sum(result.status == "failed" for result in job.results)
        self.metrics.ingest_ended(job.collection, state, failed)

    def admin(self) -> Admin:
        """This thread's index as its operator sees it: API keys and authentication
        (`service.admin.Admin`)."""
        return Admin(self.index())

    def form_secret(self) -> bytes:
        """The key of the web page's form tokens (`server.csrf`): derived from the
        audit key (`Index.signing_key`), so every process that signs this index's
        audit log makes and accepts the same tokens, across restarts too."""
        if self._form_secret is None:
            derived = keyed_signature(self.index().signing_key(), "quoteproof-form-secret")
            self._form_secret = bytes.fromhex(derived)
        return self._form_secret

    def backend(self) -> Backend:
        """Return the language-model backend (made once; raises `BackendConfigError`
        when the options cannot make one)."""
        with self._lock:
            if self._backend is None:
                self._backend = make_backend(self.config)
            return self._backend

    def start(self) -> None:
        """Start ingesting: jobs a previous run left unfinished resume."""
        self.jobs.start()

    def close(self) -> None:
        """Stop ingesting (unfinished jobs resume on the next start) and close the
        indexes opened so far."""
        self.jobs.shutdown()
        with self._lock:
            opened, self._opened = self._opened, []
        for idx in opened:
            with contextlib.suppress(Exception):  # another thread's connection: GC closes it
                idx.close()


def app_state(request: Request) -> AppState:
    """FastAPI dependency: the `AppState` of the app serving `request`."""
    state: AppState = request.app.state.quoteproof
    return state


AppStateDep = Annotated[AppState, Depends(app_state)]
"""`AppState` as a FastAPI dependency annotation: `state: AppStateDep`."""
