"""Reranking the head of a fused list with a cross-encoder loaded from a local path."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from quoteproof.model import Hit, Via
from quoteproof.retrieval.embedder import load_sentence_model


class Reranker:
    """A sentence-transformers `CrossEncoder` that scores (query, chunk) pairs.

    `model` is a local directory (or a model name the hub cache holds); it is
    loaded on first use.
    """

    def __init__(self, model: str) -> None:
        self.model = model
        self._loaded: Any = None

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        """Return the cross-encoder's score for `query` against each text, in order."""
        if self._loaded is None:
            self._loaded = load_sentence_model("CrossEncoder", self.model, self.model)
        if not texts:
            return []
        predicted = self._loaded.predict(
            [(query, text) for text in texts], show_progress_bar=False, convert_to_numpy=True
        )
        return [float(score) for score in predicted]

    def rerank(self, query: str, hits: Sequence[Hit], keep: int) -> list[Hit]:
        """Return the `keep` best of `hits` by cross-encoder score, best first.

        Each hit's score becomes the cross-encoder's; its `via` keeps how it ranked
        before and adds `rerank`. Equal scores keep their earlier order.
        """
        scored = self.scores(query, [hit.chunk.text for hit in hits])
        order = sorted(range(len(hits)), key=lambda i: (-scored[i], hits[i].rank))[:keep]
        reranked = []
        for rank, i in enumerate(order, start=1):
            hit = hits[i]
            via = (*hit.via, Via("rerank", rank, scored[i]))
            reranked.append(Hit(hit.chunk, scored[i], rank, via))
        return reranked
