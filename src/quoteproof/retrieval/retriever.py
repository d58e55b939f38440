"""The retriever behind `search` and `ask`: BM25, dense or hybrid (RRF), optional rerank.

Which retriever runs when none is named: hybrid when the dense extra is installed
and the index holds vectors, else BM25 alone, with a one-time notice saying why
(a `RetrievalNotice` warning).
"""

from __future__ import annotations

import warnings
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from quoteproof.defaults import DEFAULT_DEPTH as DEFAULT_DEPTH
from quoteproof.defaults import DEFAULT_RERANK_CANDIDATES as DEFAULT_RERANK_CANDIDATES
from quoteproof.defaults import DEFAULT_RERANK_KEEP as DEFAULT_RERANK_KEEP
from quoteproof.errors import Hint, RetrievalError
from quoteproof.errors import RetrievalNotice as RetrievalNotice
from quoteproof.model import Hit, RetrievalInfo, Via
from quoteproof.retrieval.embedder import DENSE_EXTRA_HINT, Embedder, dense_available
from quoteproof.retrieval.evidence import BM25_COVERAGE, COSINE, term_coverage
from quoteproof.retrieval.fusion import reciprocal_rank_fusion
from quoteproof.retrieval.rerank import Reranker
from quoteproof.retrieval_settings import RetrievalSettings as RetrievalSettings
from quoteproof.retrieval_settings import RetrieverName as RetrieverName
from quoteproof.store.base import Store
from quoteproof.store.vectors import TRUNCATED_VECTORS_SETTING, embedding_space_mismatch
from quoteproof.terms import declared_names, renamed, words


@dataclass(frozen=True)
class Retrieval:
    """Hits for one query, best first, and how they were found (with the evidence)."""

    hits: list[Hit]
    info: RetrievalInfo


def _notice(message: str) -> None:
    warnings.warn(message, RetrievalNotice, stacklevel=3)


class Retriever:
    """Runs retrieval against one store; keeps its models loaded between queries.

    Raises RetrievalError at construction when the named retriever cannot run
    (dense extra missing, index without vectors, another embedding model).
    """

    def __init__(self, store: Store, settings: RetrievalSettings | None = None) -> None:
        self.store = store
        self.settings = settings or RetrievalSettings()
        self.name, self.embedder = self._choose()
        self._reranker = (
            Reranker(self.settings.rerank_model) if self.settings.rerank_model else None
        )

    def _choose(self) -> tuple[RetrieverName, Embedder | None]:
        wanted = self.settings.retriever
        if wanted == "bm25":
            return "bm25", None
        space = self.store.embedding_space()
        if wanted is None and (space is None or not dense_available()):
            if self.store.count_documents():  # an empty index has nothing to retrieve
                _notice(
                    f"retrieval is BM25 alone: dense retrieval needs {DENSE_EXTRA_HINT}"
                    if not dense_available()
                    else f"retrieval is BM25 alone: index {self.store.location} has no "
                    "vectors (ingest again with the dense extra installed to add them)"
                )
            return "bm25", None
        if not dense_available():
            raise RetrievalError(
                f"{wanted} retrieval needs the dense extra: {DENSE_EXTRA_HINT}",
                hint=Hint.DENSE_EXTRA,
                facts={"retriever": str(wanted), "install": DENSE_EXTRA_HINT},
            )
        if space is None:
            raise RetrievalError(
                f"{wanted} retrieval: index {self.store.location} has no vectors "
                "(ingest with the dense extra installed to add them)",
                hint=Hint.NO_VECTORS,
                facts={"retriever": str(wanted), "location": self.store.location},
            )
        asked = self.settings.embed_model
        if asked is not None and asked != space.model:
            raise RetrievalError(embedding_space_mismatch(self.store.location, space, asked))
        if self.store.get_setting(TRUNCATED_VECTORS_SETTING) is not None:
            _notice(
                f"index {self.store.location} holds vectors made before long chunks were "
                "embedded whole: words past the model's 256 tokens are invisible to dense "
                "search and to the refusal evidence; ingest the files into a new index"
            )
        return wanted or "hybrid", Embedder(space.model)

    def search(
        self, query: str, top_k: int, collections: Collection[str] | None = None
    ) -> Retrieval:
        """Return the `top_k` best hits for `query` (fewer when reranking keeps fewer)
        and the retrieval evidence; with `collections`, only from documents in those
        collections. Raises RetrievalError when a model fails to load."""
        settings = self.settings
        wanted = max(top_k, settings.rerank_candidates if self._reranker else top_k)
        lists: dict[str, Sequence[Hit]] = {}
        depth = max(settings.depth, wanted) if self.name == "hybrid" else wanted
        if self.name in ("bm25", "hybrid"):
            lists["bm25"] = self.store.search_bm25(query, depth, collections)
        if self.embedder is not None:
            vector = self.embedder.embed_query(query)
            lists["dense"] = self.store.search_dense(vector, depth, collections)
        if self.name == "hybrid":
            weights = {"bm25": settings.bm25_weight, "dense": settings.dense_weight}
            lists, weights = self._with_declared_names(query, lists, weights, depth, collections)
            hits = reciprocal_rank_fusion(lists, k=settings.rrf_k, weights=weights, limit=wanted)
        else:
            hits = [
                Hit(h.chunk, h.score, h.rank, (Via(self.name, h.rank, h.score),))
                for h in lists[self.name]
            ]
        if self.embedder is not None:
            tops = [
                found[0].score
                for name, found in lists.items()
                if name.startswith("dense") and found
            ]
            evidence: float | None = max(tops, default=None)
            kind = f"{COSINE}:{self.embedder.model}"
        else:
            evidence, kind = term_coverage(query, lists["bm25"]), BM25_COVERAGE
        if self._reranker is not None:
            hits = self._reranker.rerank(
                query, hits[: settings.rerank_candidates], settings.rerank_keep
            )
            evidence = hits[0].score if hits else None
            kind = f"rerank:{self._reranker.model}"
        return Retrieval(hits[:top_k], RetrievalInfo(self.name, evidence, kind))

    def _with_declared_names(
        self,
        query: str,
        lists: dict[str, Sequence[Hit]],
        weights: dict[str, float],
        depth: int,
        collections: Collection[str] | None,
    ) -> tuple[dict[str, Sequence[Hit]], dict[str, float]]:
        """`lists` and their `weights` with, when `query` names a drug by one of the
        two names a found document's title declares the same ("VEKLURY®
        (remdesivir)": `terms.declared_names`), the BM25 and dense lists of the query
        with the other name (`bm25 as VEKLURY`, weighted as BM25 and dense): a label
        says "VEKLURY" where a user asks about remdesivir. The retrieval evidence is
        then the best cosine of either wording."""
        labels = (hit.chunk.label for found in lists.values() for hit in found)
        names = declared_names(labels)
        other = renamed(query, names)
        if other is None or self.embedder is None:
            return lists, weights
        alias = ", ".join(sorted({names[w] for w in words(query) if w in names}))
        bm25, dense = f"bm25 as {alias}", f"dense as {alias}"
        vector = self.embedder.embed_query(other)
        more = {
            bm25: self.store.search_bm25(other, depth, collections),
            dense: self.store.search_dense(vector, depth, collections),
        }
        return lists | more, weights | {bm25: weights["bm25"], dense: weights["dense"]}
