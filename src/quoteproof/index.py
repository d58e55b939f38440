"""The Python API: `Index.open`, `.ingest`, `.embed`, `.search`, `.ask`, `.calibrate`
and `.verify`."""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Collection, Iterable, Sequence
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from quoteproof.answer_timing import AnswerTiming, TimedBackend
from quoteproof.audit_key import audit_key_path, read_audit_key, signing_key
from quoteproof.closing import ClosedOnExit
from quoteproof.defaults import DEFAULT_ASK_TOP_K as DEFAULT_ASK_TOP_K
from quoteproof.defaults import DEFAULT_INDEX as DEFAULT_INDEX
from quoteproof.defaults import DEFAULT_MAX_FILE_MB
from quoteproof.defaults import DEFAULT_SEARCH_TOP_K as DEFAULT_SEARCH_TOP_K
from quoteproof.errors import RetrievalError, StoreError, UnfinishedIngestError
from quoteproof.faithfulness import assess
from quoteproof.llm.base import Backend
from quoteproof.llm.capability import Capability
from quoteproof.llm.extractive import ExtractiveBackend
from quoteproof.model import (
    DEFAULT_COLLECTION,
    Answer,
    Chunk,
    Hit,
    RecordedAnswer,
    RetrievalInfo,
    Triplet,
)
from quoteproof.receipts import QuoteCheck, verify_answer
from quoteproof.refusal import RefusalPolicy
from quoteproof.retrieval.embedder import DEFAULT_EMBED_MODEL, Embedder, dense_available
from quoteproof.retrieval.evidence import Calibration
from quoteproof.retrieval.retriever import (
    Retrieval,
    RetrievalNotice,
    RetrievalSettings,
    Retriever,
)
from quoteproof.retrieval.triplets import TripletHit, search_triplets
from quoteproof.store.base import Store
from quoteproof.store.open import open_store
from quoteproof.store.unfinished import mark_finished, mark_started, started_unfinished
from quoteproof.store.vectors import embedding_space_mismatch
from quoteproof.strategies.compose import compose
from quoteproof.strategies.context import (
    check_context,
)
from quoteproof.strategies.options import AnswerOptions
from quoteproof.streaming import EventSink
from quoteproof.terms import well_formed

if TYPE_CHECKING:
    from quoteproof.ingest.files import Discovery
    from quoteproof.ingest.graph_file import GraphImport
    from quoteproof.ingest.parsing import IngestSettings
    from quoteproof.ingest.pipeline import IngestResult
    from quoteproof.retrieval.embed_index import EmbedReport


def changed_any(results: Sequence[IngestResult]) -> bool:
    """True when one of an ingest's `results` added or changed a document."""
    return any(result.status in ("added", "updated") for result in results)


class Index(ClosedOnExit):
    """A document collection that answers questions with verifiable quotes.

    `retrieval` says how `search` and `ask` retrieve (default: hybrid when the index
    has vectors and the dense extra is installed, else BM25). `audit_key` is the file
    of the key that signs its audit log (`audit_key.audit_key_path` of it: None is
    `$QUOTEPROOF_AUDIT_KEY`, else the user's configuration folder). `refusal` is its
    refusal policy (evidence, thresholds, key terms: `quoteproof.refusal`).
    """

    def __init__(
        self,
        store: Store,
        retrieval: RetrievalSettings | None = None,
        audit_key: str | Path | None = None,
    ) -> None:
        self.store = store
        self.retrieval = retrieval or RetrievalSettings()
        self.audit_key_path = audit_key_path(audit_key)
        self._retriever: Retriever | None = None
        self._signing_key: bytes | None = None
        self.refusal = RefusalPolicy(store, lambda: self.retriever)

    @classmethod
    def open(
        cls,
        location: str | Path = DEFAULT_INDEX,
        *,
        create: bool = False,
        retrieval: RetrievalSettings | None = None,
        audit_key: str | Path | None = None,
    ) -> Index:
        """Open the index at `location`, a directory (SQLite) or a `postgresql://`
        URL; create it if `create` is true. `audit_key`: see the class docstring.

        Raises `IndexNotFoundError` when it does not exist and `create` is false,
        `StoreError` when it cannot be used.
        """
        return cls(open_store(location, create=create), retrieval, audit_key)

    def close(self) -> None:
        """Close the underlying store."""
        self.store.close()

    @staticmethod
    def discover(paths: Iterable[str | Path]) -> list[Path]:
        """Return the files `ingest` would read for `paths` (folders walked recursively).

        Raises `IngestError` for a path that does not exist.
        """
        return Index.discover_files(paths).files

    @staticmethod
    def discover_files(paths: Iterable[str | Path]) -> Discovery:
        """Return the files `ingest` would read for `paths` and those its folder walks
        leave out, with the reason (see `ingest.files.discover_files`).

        Raises `IngestError` for a path that does not exist.
        """
        from quoteproof.ingest.files import discover_files  # ingest only

        return discover_files([Path(p) for p in paths])

    def ingest(
        self,
        paths: Iterable[str | Path],
        *,
        settings: IngestSettings | None = None,
        jobs: int = 1,
        on_file: Callable[[IngestResult], None] | None = None,
        embed: bool | None = None,
        collection: str = DEFAULT_COLLECTION,
    ) -> list[IngestResult]:
        """Ingest files and folders; return one result per file, failures included.

        The same as `ingest_discovered(discover(paths), ...)`: raises `IngestError`
        for a path that does not exist, before anything is ingested. The files the
        folder walks leave out are not in the results: `discover_files` names them.
        """
        return self.ingest_discovered(
            self.discover(paths),
            settings=settings,
            jobs=jobs,
            on_file=on_file,
            embed=embed,
            collection=collection,
        )

    def ingest_discovered(
        self,
        files: Sequence[Path],
        *,
        settings: IngestSettings | None = None,
        jobs: int = 1,
        on_file: Callable[[IngestResult], None] | None = None,
        embed: bool | None = None,
        collection: str = DEFAULT_COLLECTION,
        after: bool = True,
    ) -> list[IngestResult]:
        """Ingest `files` as `discover` returned them (not walked again); return one
        result per file, failures included.

        A failing file (unreadable, a broken link, a bad document...) does not stop
        the batch and leaves nothing in the index.
        `settings` sets the file size limit, OCR and chunk sizes; `collection` (it
        overrides `settings.collection`) the collection new and changed files go to
        (ValueError when the name is invalid); `jobs` > 1 parses in that many worker
        processes; `on_file` is called after each file, in order (for progress
        display). Then, when `embed` is true, or None and the dense extra is
        installed, the chunks that lack vectors are embedded (see `embed`), and
        when a file was added or changed the automatic refusal threshold is
        estimated again (see `automatic_threshold`; when retrieval cannot run, a
        `RetrievalNotice` says so and the first ask estimates it). With `after`
        False the caller runs `after_ingest` itself (`embed` is then not used).
        Until `after_ingest` has run, the index answers no question
        (`UnfinishedIngestError`), even after an interrupt.
        """
        from quoteproof.ingest.parsing import IngestSettings
        from quoteproof.ingest.pipeline import ingest_files  # ingest only

        settings = replace(settings or IngestSettings(), collection=collection)
        mark_started(self.store)
        results = []
        # closed on any exception (Ctrl-C in `on_file`), which kills the parses in
        # progress: a generator kept alive by the traceback would leave them running
        with closing(ingest_files(self.store, files, settings, jobs)) as stored:
            for result in stored:
                results.append(result)
                if on_file is not None:
                    on_file(result)
        if after:
            self.after_ingest(changed_any(results), embed)
        return results

    def after_ingest(
        self,
        changed: bool,
        embed: bool | None,
        on_embedded: Callable[[int], None] | None = None,
    ) -> None:
        """What `ingest` does once its files are stored: embed the chunks that lack
        vectors when `embed` is true, or None and the dense extra is installed
        (`on_embedded(n)` after each block of n chunks; an exception it raises
        stops embedding, the blocks done stay stored); when `changed` (a document
        was added or changed) or an unfinished ingest was recorded, estimate the
        automatic refusal threshold again (not in an index that holds no document:
        there is nothing to estimate on). Then record that no ingest is unfinished
        (`store.unfinished`): the index answers questions again."""
        unfinished = started_unfinished(self.store) is not None
        changed = changed or unfinished
        if embed or (embed is None and dense_available()):
            self.embed(on_progress=on_embedded)
        if changed and self.store.count_documents():
            try:
                self.refusal.automatic_threshold()
            except RetrievalError as error:  # the documents are stored: estimate on first ask
                warnings.warn(
                    f"the automatic refusal threshold was not estimated ({error}); "
                    "it will be when the index is first asked",
                    RetrievalNotice,
                    stacklevel=3,
                )
        if unfinished:
            mark_finished(self.store)

    def embed(
        self,
        model: str | None = None,
        *,
        on_start: Callable[[int], None] | None = None,
        on_progress: Callable[[int], None] | None = None,
    ) -> EmbedReport:
        """Compute vectors for current chunks that lack one (new or changed chunks).

        `model` defaults to the index's embedding model, or all-MiniLM-L6-v2 for an
        index without vectors. Raises `StoreError` when `model` differs from the
        index's, `RetrievalError` when the dense extra is missing or the model
        does not load.
        """
        space = self.store.embedding_space()
        chosen = model or (space.model if space else DEFAULT_EMBED_MODEL)
        if space is not None and chosen != space.model:
            raise StoreError(embedding_space_mismatch(self.store.location, space, chosen))
        from quoteproof.retrieval.embed_index import embed_pending

        embedder = self._retriever_embedder(chosen) or Embedder(chosen)
        return embed_pending(self.store, embedder, on_start=on_start, on_progress=on_progress)

    def _retriever_embedder(self, model: str) -> Embedder | None:
        """The already loaded embedder of the retriever, when it uses `model`."""
        embedder = self._retriever.embedder if self._retriever else None
        return embedder if embedder is not None and embedder.model == model else None

    def signing_key(self) -> bytes:
        """The key that signs this index's audit log entries, read from
        `audit_key_path` (made there on first use; `audit_key.signing_key`). Raises
        `StoreError` when it cannot be read or made, or lies inside the index."""
        if self._signing_key is None:
            self._signing_key = signing_key(self.audit_key_path, self.store.location)
        return self._signing_key

    def verification_key(self) -> bytes | None:
        """The key that checks this index's signatures (audit log entries, answer
        seals): the one at `audit_key_path`, None when there is none (never made
        here). Raises `StoreError` when it cannot be read."""
        if self._signing_key is not None:
            return self._signing_key
        return read_audit_key(self.audit_key_path)

    def chunk(self, ref: str) -> Chunk | None:
        """Return the chunk with `ref` (of any stored version), or None."""
        return self.store.get_chunk(ref)

    @property
    def retriever(self) -> Retriever:
        """The retriever `search` and `ask` use, made on first use and kept (its models
        stay loaded). Raises `RetrievalError` when the configured one cannot run."""
        if self._retriever is None:
            self._retriever = Retriever(self.store, self.retrieval)
        return self._retriever

    def retrieve(
        self,
        query: str,
        *,
        top_k: int = DEFAULT_SEARCH_TOP_K,
        collections: Collection[str] | None = None,
    ) -> Retrieval:
        """Return the `top_k` best hits for `query` with how they were found and the
        retrieval evidence; only from `collections` when given (None: all). Lone
        surrogates in `query` (undecodable bytes) are searched as U+FFFD
        (`terms.well_formed`). Raises `RetrievalError` (see `retriever`), and
        `UnfinishedIngestError` while an ingest into the index has not finished
        (`after_ingest`)."""
        started = started_unfinished(self.store)
        if started is not None:
            raise UnfinishedIngestError(self.store.location, started)
        return self._retrieve(query, top_k, collections)

    def _retrieve(
        self, query: str, top_k: int, collections: Collection[str] | None = None
    ) -> Retrieval:
        """`retrieve` without the unfinished-ingest check (for `after_ingest`)."""
        return self.retriever.search(well_formed(query), top_k, collections)

    def search(
        self,
        query: str,
        *,
        top_k: int = DEFAULT_SEARCH_TOP_K,
        collections: Collection[str] | None = None,
    ) -> list[Hit]:
        """Return the `top_k` chunks most relevant to `query`, best first (only from
        `collections` when given)."""
        return self.retrieve(query, top_k=top_k, collections=collections).hits

    def search_facts(
        self,
        query: str,
        *,
        top_k: int = DEFAULT_SEARCH_TOP_K,
        collections: Collection[str] | None = None,
    ) -> list[TripletHit]:
        """Return the `top_k` current knowledge-graph triplets whose entities `query`
        names (and those one hop away), best first, only from `collections` when
        given (`retrieval.triplets.search_triplets`); [] for an index without a graph."""
        return search_triplets(self.store, query, top_k, collections)

    def calibrate(self, questions: Sequence[tuple[str, bool]]) -> Calibration:
        """Derive the refusal threshold from `(question, answerable)` pairs with the
        current retrieval, store it in the index and return it (`RefusalPolicy`).

        Raises ValueError unless both answerable and unanswerable questions are given.
        """
        return self.refusal.calibrate(
            questions, lambda question: self.retrieve(question, top_k=DEFAULT_ASK_TOP_K)
        )

    def calibration(self) -> Calibration | None:
        """Return the user's calibrated refusal threshold, or None when never calibrated."""
        return self.refusal.calibration()

    def automatic_threshold(self) -> Calibration | None:
        """Return the automatic refusal threshold, estimated when the documents or
        retrieval changed (`RefusalPolicy.automatic_threshold`)."""
        return self.refusal.automatic_threshold()

    def refusal_check(self, question: str, retrieval: Retrieval) -> RetrievalInfo:
        """Return the evidence `question` is judged on, the refusal threshold that
        applies and the key terms no retrieved source carries (`RefusalPolicy.check`)."""
        return self.refusal.check(question, retrieval)

    def ask(
        self,
        question: str,
        options: AnswerOptions | None = None,
        *,
        backend: Backend | None = None,
        events: EventSink | None = None,
        collections: Collection[str] | None = None,
        timing: AnswerTiming | None = None,
        **choices: Any,
    ) -> Answer:
        """Answer `question` from the index; quotes are verbatim by construction.

        `options` (`AnswerOptions`, with any of its fields given as `choices`:
        `mode="cite"`) say how: `mode` picks the strategy (`strategies.registry`),
        `strictness` applies to `cite`, `max_steps` to `agent`, `top_k` sources (of
        twice as many hits, those with something to quote first) are
        given to the model, and `threshold` is the fuzzy-match score (0-100) a
        paraphrased quote needs to resolve; they reach the strategy whole. `backend`
        defaults to the extractive backend (no model), which answers in `quote` mode
        only. The answer is a refusal, and the model is not
        called, when nothing is retrieved or the retrieval evidence is below the refusal
        threshold (`no_relevant_sources`; see `refusal_check`), or when a key term of the
        question (a name, code or number) is in no retrieved source (`not_in_sources`,
        the reason given when both hold: it names what the documents lack).
        `options.context` is what the model is given (`model.ContextForm`):
        `paragraphs`; `triplets` (the knowledge-graph triplets whose entities the
        question names, `retrieval.triplets`, and, with a model, those it extracts
        from the retrieved paragraphs, an extracted triplet equal to an imported one
        left out, `strategies.facts.combined_facts`; answered from them alone,
        `strategies.context.answer_from_facts`); `both` (paragraphs and triplets
        fused by RRF, the triplets as `TID-n` lines the answer may cite); `whole`
        (every chunk of the documents in scope, or of `options.document`, when they
        fit the model's context window, else the retrieved ones with a notice).
        `events` receives the draft of the answer while it is made (see
        `quoteproof.streaming`). `collections` limits every source (retrieval, agent
        searches and tables) to those collections (None: all). Lone surrogates in
        `question` (undecodable bytes) are taken, and recorded, as U+FFFD
        (`terms.well_formed`). Every answer carries its `faithfulness`, checked by
        `options.faithfulness` (`quoteproof.faithfulness.assess`); `timing`, when
        given, receives the seconds spent retrieving, in model calls and in all.

        Raises `ModeUnavailableError` for a mode the backend lacks a capability for
        (`strategies.registry.modes_for`), ValueError for an unknown mode,
        TypeError for a choice that is no field of `AnswerOptions`, and
        `BackendError` when the model server fails.
        """
        start = time.perf_counter()
        timing = timing or AnswerTiming()
        options = replace(options or AnswerOptions(), **choices)
        check_context(options)
        backend = backend or ExtractiveBackend()
        if Capability.MODEL in backend.capabilities:
            backend = TimedBackend(backend, timing)
        answer = compose(self, well_formed(question), options, backend, events, collections, timing)
        answer = assess(answer, backend, options.faithfulness)
        timing.total_s = time.perf_counter() - start
        return answer

    def import_graph(
        self,
        path: str | Path,
        *,
        collection: str = DEFAULT_COLLECTION,
        max_file_mb: float = DEFAULT_MAX_FILE_MB,
    ) -> GraphImport:
        """Import the knowledge-graph file at `path` (CSV, TSV or JSON Lines of
        triplets) into `collection`, replacing its earlier import, all or nothing
        (`ingest.graph_file.import_graph_file`). Raises `IngestError` naming the file
        and the cause, `UsageError` for an invalid collection name."""
        from quoteproof.ingest.graph_file import import_graph_file  # import only

        return import_graph_file(self.store, Path(path), collection, max_file_mb)

    def triplets(
        self, collections: Collection[str] | None = None, graph_file: str | None = None
    ) -> list[Triplet]:
        """The current triplets of `collections` (None: all), of `graph_file` only
        when given, by collection, graph file and row."""
        return self.store.list_triplets(collections, graph_file)

    def verify(self, answer: Answer | RecordedAnswer) -> list[QuoteCheck]:
        """Re-check every quote of `answer` (fresh or recorded) against this index
        (see `receipts`)."""
        return verify_answer(answer, self.store)
