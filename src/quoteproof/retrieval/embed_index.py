"""Filling in the vectors an index lacks (after ingest, or to resume an interrupted run).

A chunk whose embedding input is longer than the model reads (all-MiniLM-L6-v2: 256
tokens) would lose its tail to truncation: it is embedded as passages the model
reads whole instead, cut by chunking's rule 6 (at sentence ends, else line breaks,
else words; each passage with the chunk's title and section line), and stored as
several vectors under the chunk's key. Dense search scores a chunk by its best
passage, so every word of every chunk is seen by the model.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from quoteproof.ingest.chunking import ChunkSettings, chunk_document
from quoteproof.ingest.model_tokens import TokenCounter, WordPieceCounter, default_counter
from quoteproof.model import Block, ParsedDocument
from quoteproof.retrieval.embedder import DEFAULT_EMBED_MODEL, Embedder, resolve_model
from quoteproof.retrieval.onnx_model import max_seq_length
from quoteproof.store.base import Store
from quoteproof.store.vectors import EmbeddingSpace, PendingEmbedding, embedding_input

EMBED_BLOCK = 512
"""Texts embedded and stored per step (at least; a chunk's passages stay in one
step): progress granularity and the most work lost when a run is interrupted."""


_WHOLE = 1 << 30
"""A size no passage split reaches: passages are cut by the model's limit only."""


@functools.lru_cache(maxsize=4)
def model_limit(model: str) -> tuple[int, TokenCounter] | None:
    """The token limit of `model` (`max_seq_length`) and a counter of its tokens,
    read from its local folder (the default model: the packaged one); None when
    they cannot be read (a model name to download: its inputs are truncated)."""
    source = Path(resolve_model(model))
    tokenizer = source / "tokenizer.json"
    if not tokenizer.is_file():
        return None
    try:
        counter = default_counter() if model == DEFAULT_EMBED_MODEL else None
        if not isinstance(counter, WordPieceCounter):
            counter = WordPieceCounter(tokenizer)
    except Exception:  # an unreadable tokenizer: embed as the model truncates
        return None
    return max_seq_length(source), counter


def passages(item: PendingEmbedding, limit: tuple[int, TokenCounter] | None) -> list[str]:
    """The texts to embed for `item`: its embedding input when the model reads it
    whole (or no `limit` is known), else passages that each fit `limit` (chunking's
    rule 6 over the chunk's text, each with the chunk's title and section line)."""
    if limit is None or not item.body:
        return [item.text]
    tokens, counter = limit
    if len(item.text) + counter.special <= tokens:  # a token is at least one character
        return [item.text]
    document = ParsedDocument(
        item.body, item.title, "text", (Block("paragraph", 0, len(item.body), item.section),)
    )
    settings = ChunkSettings(_WHOLE, _WHOLE, 0, max_chars=_WHOLE, embed_tokens=tokens)
    spans = chunk_document(document, settings, counter)
    if len(spans) <= 1:
        return [item.text]
    return [embedding_input(item.title, item.section, item.body[s.start : s.end]) for s in spans]


@dataclass(frozen=True)
class EmbedReport:
    """What `embed_pending` did: vectors computed, seconds spent, model used, where
    it ran (`Embedder.device`; None when nothing was embedded), and for how many
    chunks (fewer than the vectors when a long chunk has one per passage)."""

    embedded: int
    seconds: float
    model: str
    device: str | None = None
    chunks: int = 0

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
    """Compute and store vectors for every current chunk that lacks them.

    Chunks whose embedding input did not change since an earlier version already
    have their vectors and are skipped. A chunk longer than the model reads gets one
    vector per passage (`passages`). Texts are embedded longest first in blocks of
    about `EMBED_BLOCK` (similar lengths batch with little padding), each block
    stored in one transaction. `on_start(total)` is called once with the number of
    vectors to compute, `on_progress(n)` after each batch of n texts is embedded.
    Raises StoreError when the index holds vectors of another model,
    RetrievalError when the model cannot load.
    """
    started = time.perf_counter()
    pending = store.pending_embeddings()
    limit = model_limit(embedder.model) if pending else None
    texts = [passages(item, limit) for item in pending]
    total = sum(map(len, texts))
    if on_start is not None:
        on_start(total)
    if not pending:
        return EmbedReport(0, time.perf_counter() - started, embedder.model)
    store.set_embedding_space(EmbeddingSpace(embedder.model, embedder.dimensions))
    order = sorted(range(len(pending)), key=lambda i: len(pending[i].text), reverse=True)
    block: list[int] = []
    size = 0
    for position, index in enumerate(order):
        block.append(index)
        size += len(texts[index])
        if size >= EMBED_BLOCK or position == len(order) - 1:
            flat = [text for i in block for text in texts[i]]
            vectors = embedder.embed_passages(flat, on_batch=on_progress)
            store.add_embeddings(
                [pending[i].key for i in block], vectors, [len(texts[i]) for i in block]
            )
            block, size = [], 0
    seconds = time.perf_counter() - started
    return EmbedReport(total, seconds, embedder.model, embedder.device, len(pending))
