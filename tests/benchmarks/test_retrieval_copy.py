"""benchmarks/retrieval.py gives the PostgreSQL index the SQLite run's vectors,
several per chunk where a chunk was embedded in passages."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from quoteproof import Index
from quoteproof.retrieval.embedder import DEFAULT_EMBED_MODEL
from quoteproof.store.vectors import EmbeddingSpace


def test_copy_vectors_keeps_each_chunks_passages(pg_database: str, tmp_path: Path) -> None:
    from retrieval import copy_vectors

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# A\n\nOne alpha.\n\n# B\n\nTwo beta.\n")
    rows = np.eye(4, dtype=np.float32)[:3]
    with Index.open(tmp_path / "sqlite", create=True) as index:
        index.ingest([folder], embed=False)
        pending = index.store.pending_embeddings()
        assert len(pending) == 2
        index.store.set_embedding_space(EmbeddingSpace(DEFAULT_EMBED_MODEL, 4))
        index.store.add_embeddings([p.key for p in pending], rows, [2, 1])
        expected = [(h.chunk.text, h.score) for h in index.store.search_dense(rows[1], 5)]
    with Index.open(pg_database, create=True) as index:
        index.ingest([folder], embed=False)
        copy_vectors(tmp_path / "sqlite", index)
        got = [(h.chunk.text, h.score) for h in index.store.search_dense(rows[1], 5)]
    assert [text for text, _ in got] == [text for text, _ in expected]
    assert np.allclose([score for _, score in got], [score for _, score in expected], atol=1e-5)
    assert abs(expected[0][1] - 1.0) < 1e-6  # the first chunk's second passage
