"""`RetrievalSettings`: how to retrieve, the one object every face hands to the
retriever. Each field carries its command-line text (`option_text.OptionText`):
the CLI's retrieval options are made from these fields, so an option is declared
once, here. This module loads none of the library (the CLI's help reads it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from quoteproof.defaults import (
    DEFAULT_DEPTH,
    DEFAULT_RERANK_CANDIDATES,
    DEFAULT_RERANK_KEEP,
    DEFAULT_RRF_K,
)
from quoteproof.option_text import OptionText

__all__ = ["RetrievalSettings", "RetrieverName"]

RetrieverName = Literal["bm25", "dense", "hybrid"]


def _option(default: Any, flag: str, help: str, minimum: float | None = None) -> Any:
    """A `RetrievalSettings` field with its command-line text (`OptionText`)."""
    return field(default=default, metadata={"option": OptionText((flag,), help, minimum=minimum)})


@dataclass(frozen=True)
class RetrievalSettings:
    """How to retrieve. `retriever` None picks hybrid when possible, else BM25.

    `embed_model` must match the model the index was embedded with (None: that
    model). With `rerank_model` (a local cross-encoder), the fused top
    `rerank_candidates` are reordered and the best `rerank_keep` kept. `rrf_k`,
    `bm25_weight` and `dense_weight` tune the fusion; `depth` is how many hits each
    list contributes to it.
    """

    retriever: RetrieverName | None = _option(  # noqa: RUF009
        None,
        "--retriever",
        "bm25, dense or hybrid (RRF of both). Default: hybrid when the index has vectors.",
    )
    embed_model: str | None = _option(
        None,
        "--embed-model",
        "Embedding model (local directory or name). Default: the index's, or "
        "all-MiniLM-L6-v2 for a new index.",
    )
    rerank_model: str | None = _option(
        None, "--rerank-model", "Local cross-encoder directory to rerank with."
    )
    rerank_candidates: int = _option(
        DEFAULT_RERANK_CANDIDATES, "--rerank-candidates", "Fused hits the reranker reorders.", 1
    )
    rerank_keep: int = _option(DEFAULT_RERANK_KEEP, "--rerank-keep", "Reranked hits kept.", 1)
    rrf_k: int = _option(DEFAULT_RRF_K, "--rrf-k", "RRF constant k.", 0)
    bm25_weight: float = _option(1.0, "--bm25-weight", "Weight of the BM25 list in fusion.", 0.0)
    dense_weight: float = _option(1.0, "--dense-weight", "Weight of the dense list in fusion.", 0.0)
    depth: int = _option(
        DEFAULT_DEPTH, "--fusion-depth", "Hits each list contributes to fusion.", 1
    )
