"""Worker functions for the concurrency tests: they run in spawned processes, so
they live in an importable module (not a test file)."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import numpy as np

from quoteproof import Index
from quoteproof.store.open import open_store
from quoteproof.store.vectors import EmbeddingSpace

TOY_SPACE = EmbeddingSpace("toy-hash", 4)


def toy_vectors(texts: list[str]) -> np.ndarray:
    """Deterministic unit vectors derived from each text's hash (no model needed)."""
    rows = [
        np.frombuffer(hashlib.sha256(text.encode()).digest()[:16], dtype=np.int32).astype(
            np.float32
        )
        for text in texts
    ]
    matrix = np.stack(rows)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def ingest_worker(location: str, paths: list[str]) -> list[tuple[str, str, str | None]]:
    """Open (creating) the index, ingest `paths` one call each, then give every
    chunk that lacks one a toy vector. Returns (path, status, error) per file."""
    outcome = []
    with Index.open(location, create=True) as index:
        for path in paths:
            for result in index.ingest([path], embed=False):
                outcome.append((result.path, result.status, result.error))
        index.store.set_embedding_space(TOY_SPACE)
        pending = index.store.pending_embeddings()
        if pending:
            keys = [p.key for p in pending]
            index.store.add_embeddings(keys, toy_vectors([p.text for p in pending]))
    return outcome


def search_worker(
    location: str, ready_file: str, stop_file: str, max_seconds: float
) -> tuple[int, list[str]]:
    """Open (creating) the index, create `ready_file`, then search in a loop until
    `stop_file` exists (or time runs out). Returns the number of rounds and the
    errors raised, if any."""
    rounds, errors = 0, []
    store = open_store(location, create=True)
    Path(ready_file).touch()
    query = toy_vectors(["query"])[0]
    deadline = time.monotonic() + max_seconds
    try:
        while rounds == 0 or (not Path(stop_file).exists() and time.monotonic() < deadline):
            try:
                store.search_bm25("topic remedy", 5)
                store.stats()
                if store.embedding_space() is not None:
                    store.search_dense(query, 5)
            except Exception as exc:
                errors.append(repr(exc))
            rounds += 1
    finally:
        store.close()
    return rounds, errors
