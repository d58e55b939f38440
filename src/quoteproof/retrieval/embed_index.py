"""Filling in the vectors an index lacks (after ingest, or to resume an interrupted run)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from quoteproof.retrieval.embedder import Embedder
from quoteproof.store.base import EmbeddingSpace, Store

EMBED_BLOCK = 512
"""Texts embedded and stored per step: progress granularity and the most work lost
when a run is interrupted."""


@dataclass(frozen=True)
class EmbedReport:
    """What `embed_pending` did: vectors computed, seconds spent, model used."""

    embedded: int
    seconds: float
    model: str

    @property
    def per_second(self) -> float:
        """Vectors per second (0 when nothing was embedded)."""
        return self.embedded / self.seconds if self.embedded and self.seconds > 0 else 0.0


def embed_pending(
    store: Store,
    embedder: Embedder,
    *,
    on_start: Callable[[int], None] | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> EmbedReport:
    """Compute and store vectors for every current chunk that lacks one.

    Chunks whose embedding input did not change since an earlier version already
    have their vector and are skipped. Texts are embedded longest first in blocks
    of `EMBED_BLOCK` (similar lengths batch with little padding), each block
    stored in one transaction. `on_start(total)` is called once, `on_progress(n)`
    after each batch of n texts is embedded. Raises StoreError when the index
    holds vectors of another model, RetrievalError when the model cannot load.
    """
    started = time.perf_counter()
    pending = store.pending_embeddings()
    if on_start is not None:
        on_start(len(pending))
    if not pending:
        return EmbedReport(0, time.perf_counter() - started, embedder.model)
    store.set_embedding_space(EmbeddingSpace(embedder.model, embedder.dimensions))
    pending.sort(key=lambda item: len(item.text), reverse=True)
    for offset in range(0, len(pending), EMBED_BLOCK):
        block = pending[offset : offset + EMBED_BLOCK]
        vectors = embedder.embed([item.text for item in block], on_batch=on_progress)
        store.add_embeddings([item.key for item in block], vectors)
    return EmbedReport(len(pending), time.perf_counter() - started, embedder.model)
