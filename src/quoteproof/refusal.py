"""The refusal policy: the evidence a question is judged on, the threshold that
applies to it (the user's calibration, else the automatic estimate), and the key
terms of the question that no retrieved source carries. `Index.ask` refuses, and
calls no model, when the evidence is below the threshold or a key term is missing.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import replace

from quoteproof.defaults import DEFAULT_ASK_TOP_K, SPARE_HITS
from quoteproof.errors import RetrievalNotice
from quoteproof.llm.extractive import Embed, best_unit_similarity
from quoteproof.llm.extractive_units import Following, TableRows, quotable_first
from quoteproof.llm.months import missing_months
from quoteproof.llm.population import missing_populations
from quoteproof.model import Chunk, RetrievalInfo, SourceTable
from quoteproof.retrieval.auto_threshold import (
    corpus_fingerprint,
    estimate_threshold,
    store_covers,
)
from quoteproof.retrieval.evidence import (
    AUTOMATIC,
    BM25_COVERAGE,
    Calibration,
    choose_threshold,
    load_calibration,
    save_calibration,
    with_sentence_evidence,
)
from quoteproof.retrieval.key_terms import missing_terms
from quoteproof.retrieval.measures import missing_measures
from quoteproof.retrieval.retriever import Retrieval, Retriever
from quoteproof.store.base import Store
from quoteproof.tables.quoted import chunk_rows
from quoteproof.terms import declared_names, renamed, well_formed


class RefusalPolicy:
    """The refusal checks of one index: `store` holds its documents and thresholds,
    `retriever()` gives its retriever (made on first use, its models kept loaded)."""

    def __init__(self, store: Store, retriever: Callable[[], Retriever]) -> None:
        self.store = store
        self._retriever = retriever

    def calibrate(
        self, questions: Sequence[tuple[str, bool]], retrieve: Callable[[str], Retrieval]
    ) -> Calibration:
        """Derive the refusal threshold from `(question, answerable)` pairs, each
        retrieved with `retrieve`, store it in the index and return it.

        Raises ValueError unless both answerable and unanswerable questions are given.
        """
        answerable: list[float] = []
        unanswerable: list[float] = []
        kind = ""
        for question, is_answerable in questions:
            info = self.evidence(question, retrieve(question))
            kind = info.evidence_kind or ""
            evidence = info.evidence if info.evidence is not None else float("-inf")
            (answerable if is_answerable else unanswerable).append(evidence)
        calibration = choose_threshold(kind, answerable, unanswerable)
        save_calibration(self.store, calibration)
        return calibration

    def calibration(self) -> Calibration | None:
        """Return the user's calibrated refusal threshold, or None when never calibrated."""
        return load_calibration(self.store)

    def automatic_threshold(self, kind: str | None = None) -> Calibration | None:
        """Return the automatic refusal threshold for the current documents and
        retrieval (see `retrieval.auto_threshold`), estimating and storing it when
        there is none yet or the documents or retrieval changed; None when too few
        off-topic probes are usable, and for BM25 alone, whose evidence (the share
        of question words in one passage) scores generic questions like "what are
        the first signs of X" as high as real ones: there the key-term check is the
        screen. `kind` is the evidence kind of the retrieval the threshold is for,
        when known (else one retrieval finds it). Raises `RetrievalError` when the
        retriever cannot run."""
        if kind is None:
            kind = self._evidence("refusal threshold")[1]
        if kind == BM25_COVERAGE:
            return None
        fingerprint = corpus_fingerprint(self.store)
        stored = load_calibration(self.store, AUTOMATIC)
        if stored and stored.fingerprint == fingerprint and stored.evidence_kind == kind:
            return stored
        estimate = estimate_threshold(
            lambda question: self._evidence(question),
            lambda topic: store_covers(self.store, topic),
            fingerprint,
        )
        if estimate is not None:
            save_calibration(self.store, estimate)
        return estimate

    def _evidence(self, question: str) -> tuple[float | None, str]:
        retrieved = self._retriever().search(
            well_formed(question), SPARE_HITS * DEFAULT_ASK_TOP_K, None
        )
        info = self.evidence(question, self.answer_sources(retrieved, DEFAULT_ASK_TOP_K))
        return info.evidence, info.evidence_kind or ""

    def evidence(self, question: str, retrieval: Retrieval) -> RetrievalInfo:
        """`retrieval.info` with the evidence `question` is judged on: with dense
        retrieval, the passage cosine averaged with the best cosine of one quotable
        unit of the first DEFAULT_ASK_TOP_K hits (`evidence.with_sentence_evidence`),
        for the question as asked or with the other name its sources' titles declare
        for a drug it names (`terms.declared_names`); other evidence as retrieved."""
        embed = self.unit_embed()
        if embed is None:
            return retrieval.info
        sources = [hit.chunk for hit in retrieval.hits[:DEFAULT_ASK_TOP_K]]
        other = renamed(question, declared_names(c.label for c in sources))
        best = max(
            best_unit_similarity(asked, sources, embed, self.table_rows())
            for asked in (question, other)
            if asked is not None
        )
        return with_sentence_evidence(retrieval.info, best)

    def answer_sources(self, retrieval: Retrieval, top_k: int) -> Retrieval:
        """`retrieval` with the `top_k` hits an answer is given and judged on: those
        with something to quote first (`quotable_first`), so that a table of contents
        or a page of headings does not take the place of a passage (ask retrieves
        SPARE_HITS times `top_k` hits for this)."""
        hits = quotable_first(retrieval.hits, self.table_rows(), self.following())
        return replace(retrieval, hits=hits[:top_k])

    def unit_embed(self) -> Embed | None:
        """The retriever's embedding, which ranks quotable units for the unit evidence
        and for the no-model answer (recent texts cached: the two share them); None
        without dense retrieval."""
        embedder = self._retriever().embedder
        return embedder.embed_recent if embedder is not None else None

    def table_rows(self) -> TableRows:
        """A chunk's table body rows from the stored tables, so that units are rows
        (each document version's tables read once)."""
        read: dict[tuple[str, int], tuple[SourceTable, ...]] = {}

        def rows(chunk: Chunk) -> list[tuple[int, int]]:
            key = (chunk.doc_id, chunk.doc_version)
            if key not in read:
                read[key] = self.store.get_tables(*key)
            return chunk_rows(read[key], chunk)

        return rows

    def following(self) -> Following:
        """The chunk after a chunk in its document version, from the store (None at
        the end), so that a unit may run from a chunk into the next."""

        def after(chunk: Chunk) -> Chunk | None:
            return next(
                (c for c in self.store.neighbours(chunk) if c.ordinal == chunk.ordinal + 1), None
            )

        return after

    def check(self, question: str, retrieval: Retrieval) -> RetrievalInfo:
        """Return `evidence` with the refusal threshold that applies (the user's
        calibration when made on this retrieval's kind of evidence, else the automatic
        one; a warning when a calibration is set aside) and the question's key terms
        that no retrieved source carries, with the population it asks about when the
        sources name only others (`population.missing_populations`) and the measure it
        asks for when none states one (`measures.missing_measures`: "an amount of
        money"), and the months of a year it names that no source spans
        (`months.missing_months`: "December 2015")."""
        info = self.evidence(question, retrieval)
        chosen = self.calibration()
        if chosen is not None and chosen.evidence_kind != info.evidence_kind:
            warnings.warn(
                f"the refusal threshold was calibrated on {chosen.evidence_kind} evidence, "
                f"this retrieval gives {info.evidence_kind}: it is not applied, the automatic "
                "one is when there is one (calibrate again with the same retrieval options)",
                RetrievalNotice,
                stacklevel=3,
            )
            chosen = None
        if chosen is None:  # the kind of evidence is known when there is evidence
            chosen = self.automatic_threshold(
                info.evidence_kind if info.evidence is not None else None
            )
        if chosen is not None and chosen.evidence_kind == info.evidence_kind:
            info = replace(info, threshold=chosen.threshold, threshold_source=chosen.source)
        texts = [f"{hit.chunk.label}\n{hit.chunk.text}" for hit in retrieval.hits]
        months = missing_months(question, texts)
        said = {word.lower() for month in months for word in month.split()}
        missing = tuple(term for term in missing_terms(question, texts) if term not in said)
        missing += missing_populations(question, texts) + missing_measures(question, texts)
        return replace(info, missing_terms=missing + months)
