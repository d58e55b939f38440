"""Dense search in the SQLite store, and the storage of its vectors
(`SQLiteDense`, which `sqlite.SQLiteStore` extends).

Dense search is exact while the index holds fewer than `ann.ANN_FROM` vectors: the
vectors of current chunks are read into one matrix (with each row's collection),
kept until the index changes (in this process or another), and multiplied with the
query vector; a collection filter masks rows of that matrix. From that size on (and
with usearch installed) a writer keeps an approximate index file beside the
database (`ann`): a search asks it for candidates, recomputes their exact
similarity from the stored vectors, keeps current chunks of the collections asked,
and adds the few vectors written since the file was last extended, searched
exactly; when candidates run short (a small collection, many retired versions) an
exact scan that streams the vectors answers. Memory per process is then bounded by
what a query touches, not by the corpus.

A chunk's vectors (one per passage) are one blob in `embeddings`, keyed by its
`embed_key`. Every write that changes what dense search sees counts in the `meta`
key `_GENERATION`, by which each process knows when its matrix is stale.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from quoteproof.model import Hit
from quoteproof.store import ann
from quoteproof.store.sql_store import CHUNK_FROM, SQLStore, marks
from quoteproof.store.vectors import Vectors, check_vectors

__all__ = ["SQLiteDense"]

_Matrix = tuple[str, np.ndarray, list[int], np.ndarray, dict[str, int], np.ndarray]
"""The cached vectors of current chunks: the search generation they were read at,
the matrix (a chunk's passages in consecutive rows), the chunk row ids, each chunk's
collection code, the codes by name, and the first row of each chunk."""

_PASSAGES_FETCHED = 4
"""Vectors the vector index is asked for per chunk wanted (a chunk may have several
passages, and retired or other collections' chunks are among the candidates)."""

_FETCH_GROWTH = 4
"""How much the candidates asked for grow when they yield too few chunks (twice at
most, then an exact scan)."""

_SCAN_BATCH = 4096
"""Rows an exact scan reads at a time."""

_GENERATION = "search_generation"
"""The meta key counting writes that change what dense search sees (documents,
retirements, vectors), so that other writes (audit entries, keys, settings) keep
every process's cached matrix."""


class SQLiteDense(SQLStore):
    """A `SQLStore` on a SQLite connection, with dense search and vector storage (see
    the module); the dialect's transactions and the rest are `sqlite.SQLiteStore`'s.

    `ann_start` and `ann_every` are the vector counts at which the vector index file
    is first written and then extended (`ann.fold`)."""

    def __init__(self, connection: sqlite3.Connection, location: str) -> None:
        super().__init__(location)
        self._db = connection
        self._writes = 0  # write transactions this process committed (`_write` counts)
        self._matrix: _Matrix | None = None
        self._ann: ann.VectorIndex | None = None
        self._ann_upto = 0
        self.ann_start = ann.ANN_FROM
        self.ann_every = ann.FOLD_EVERY
        self._seen: tuple[int, int] | None = None  # (_writes, data_version) last checked

    def _searched_data_changed(self) -> None:
        """Count a write that changes what dense search sees (inside a transaction)."""
        self._run(
            "INSERT INTO meta (key, value) VALUES (?, '1') "
            "ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
            (_GENERATION,),
        )

    def _current_vectors(self) -> _Matrix:
        """The vectors of current chunks that the vector index file (`self._ann`,
        opened here when one is recorded) does not cover, as one matrix (a chunk's
        passages in consecutive rows), with the chunk row ids, each chunk's
        collection (as a code, and the codes by collection name) and each chunk's
        first row. Without a file: all the vectors of current chunks."""
        seen = (self._writes, self._db.execute("PRAGMA data_version").fetchone()[0])
        if self._matrix is not None and self._seen == seen:
            return self._matrix
        self._seen = seen
        row = self._run("SELECT value FROM meta WHERE key = ?", (_GENERATION,)).fetchone()
        generation = str(row["value"]) if row is not None else ""
        if self._matrix is None or self._matrix[0] != generation:
            self._open_vector_index()
            rows = self._run(
                f"SELECT c.id, e.vector, d.collection FROM {CHUNK_FROM} JOIN embeddings e "
                "ON e.key = c.embed_key WHERE d.is_current = 1 AND e.rowid > ? ORDER BY c.id",
                (self._ann_upto,),
            ).fetchall()
            space = self.embedding_space()
            dims = space.dimensions if space else 0
            blob = b"".join(r["vector"] for r in rows)
            matrix = np.frombuffer(blob, dtype="<f4").reshape(-1, dims) if dims else np.zeros(0)
            per_chunk = [len(r["vector"]) // (4 * dims) for r in rows] if dims else []
            firsts = np.cumsum([0, *per_chunk[:-1]], dtype=np.int64) if rows else np.zeros(0)
            codes: dict[str, int] = {}
            row_codes = np.fromiter(
                (codes.setdefault(r["collection"], len(codes)) for r in rows),
                dtype=np.int32,
                count=len(rows),
            )
            self._matrix = (
                generation,
                matrix,
                [r["id"] for r in rows],
                row_codes,
                codes,
                firsts,
            )
        return self._matrix

    def _open_vector_index(self) -> None:
        """Map the vector index file recorded in `meta` (none: search is exact)."""
        upto = ann.recorded_upto(self._db)
        if upto and not ann.available():  # made where usearch was installed: search exactly
            upto = 0
        if upto == self._ann_upto:
            return
        try:
            path = ann.index_path(Path(self.location), upto)
            breadth = ann.recorded_breadth(self._db)
            self._ann = ann.VectorIndex(path, breadth) if upto else None
        except (OSError, RuntimeError):  # removed by a writer since: the next write records one
            self._ann = None
        self._ann_upto = upto if self._ann is not None else 0

    def search_dense(
        self, vector: Vectors, limit: int, collections: Iterable[str] | None = None
    ) -> list[Hit]:
        """Return up to `limit` current chunks ranked by the cosine similarity of their
        best passage, best first (of documents in `collections` only, when given)."""
        state = self._current_vectors()
        _, matrix, ids, row_codes, codes, firsts = state
        if self._ann is not None and limit > 0:
            query = np.asarray(vector, dtype=np.float32).reshape(-1)
            return self._approximate(query, limit, collections, state)
        if limit <= 0 or not ids:
            return []
        similarity = matrix @ np.asarray(vector, dtype=np.float32).reshape(-1)
        if len(firsts) == len(similarity):
            scores = similarity
        else:
            scores = np.maximum.reduceat(similarity, firsts)
        available = len(ids)
        if collections is not None:
            wanted = [codes[name] for name in set(collections) if name in codes]
            outside = ~np.isin(row_codes, wanted)
            available -= int(outside.sum())
            if available == 0:
                return []
            scores[outside] = -np.inf
        count = min(limit, available)
        best = np.argpartition(-scores, count - 1)[:count]
        best = best[np.argsort(-scores[best], kind="stable")]
        return self._ranked_hits([(ids[i], float(scores[i])) for i in best])

    def _approximate(
        self, query: np.ndarray, limit: int, collections: Iterable[str] | None, state: _Matrix
    ) -> list[Hit]:
        """Dense search with the vector index file: its candidates (more of them
        while they yield fewer than `limit` chunks, then an exact scan of what it
        covers) and the vectors written after it, searched exactly."""
        assert self._ann is not None
        wanted = None if collections is None else sorted(set(collections))
        if wanted == []:
            return []
        scores: dict[int, float] = {}
        fetch = _PASSAGES_FETCHED * limit
        while True:
            keys = self._ann.search(query, fetch)
            scores = self._scored(query, "e.rowid IN (" + marks(len(keys)) + ")", keys, wanted)
            if len(scores) >= limit:
                break
            # a graph search is not sure to reach every vector, even when asked for all
            if fetch >= min(self._ann.size, _PASSAGES_FETCHED * limit * _FETCH_GROWTH**2):
                scores = self._scored(query, "e.rowid <= ?", [self._ann_upto], wanted, limit)
                break
            fetch *= _FETCH_GROWTH
        _, matrix, ids, row_codes, codes, firsts = state
        if ids:  # the vectors written since the file was last extended
            similarity = matrix @ query
            if len(firsts) != len(similarity):
                similarity = np.maximum.reduceat(similarity, firsts)
            inside = [codes[name] for name in wanted if name in codes] if wanted else []
            for position in np.flatnonzero(
                np.ones(len(ids), bool) if wanted is None else np.isin(row_codes, inside)
            ):
                chunk_id = ids[position]
                scores[chunk_id] = max(scores.get(chunk_id, -np.inf), float(similarity[position]))
        ranked = sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))[:limit]
        return self._ranked_hits(ranked)

    def _scored(
        self,
        query: np.ndarray,
        condition: str,
        params: Sequence[Any],
        collections: Sequence[str] | None,
        keep: int | None = None,
    ) -> dict[int, float]:
        """The best passage's similarity to `query` of each current chunk (of
        `collections`, when given) whose embeddings row meets `condition`, read in
        batches; with `keep`, only the best `keep` are kept (memory stays bounded)."""
        only = "" if collections is None else f" AND d.collection IN ({marks(len(collections))})"
        cursor = self._db.execute(
            f"SELECT c.id, e.vector FROM {CHUNK_FROM} JOIN embeddings e ON e.key = c.embed_key "
            f"WHERE d.is_current = 1 AND {condition}{only}",
            [*params, *(collections or ())],
        )
        scores: dict[int, float] = {}
        dims = len(query)
        while rows := cursor.fetchmany(_SCAN_BATCH):
            for row in rows:
                passages = np.frombuffer(row["vector"], dtype="<f4").reshape(-1, dims)
                scores[row["id"]] = float((passages @ query).max())
            if keep is not None and len(scores) > keep:
                scores = dict(sorted(scores.items(), key=lambda p: (-p[1], p[0]))[:keep])
        return scores

    def add_embeddings(
        self, keys: list[str], vectors: Vectors, parts: Sequence[int] | None = None
    ) -> None:
        """Store `parts[i]` consecutive rows of `vectors` (one when None) under
        `keys[i]`, as one blob, in one transaction; stored keys are kept."""
        counts = check_vectors(self.location, self.embedding_space(), keys, vectors, parts)
        rows = np.ascontiguousarray(vectors, dtype="<f4")
        ends = np.cumsum(counts)
        with self._write():
            self._run_many(
                "INSERT OR IGNORE INTO embeddings (key, vector) VALUES (?, ?)",
                (
                    (key, rows[end - count : end].tobytes())
                    for key, count, end in zip(keys, counts, ends, strict=True)
                ),
            )
            self._searched_data_changed()
        space = self.embedding_space()
        if space is not None:
            ann.fold(
                self._db,
                Path(self.location),
                space.dimensions,
                self._record_vector_index,
                start=self.ann_start,
                every=self.ann_every,
            )

    def _record_vector_index(self, upto: int, breadth: int, calibrated: int) -> None:
        """Record the vector index file covering embeddings rows up to `upto`, its
        search breadth and the vector count at which that was chosen."""
        with self._write():
            self._run_many(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                [
                    (ann.UPTO_KEY, str(upto)),
                    (ann.BREADTH_KEY, str(breadth)),
                    (ann.CALIBRATED_KEY, str(calibrated)),
                ],
            )
            self._searched_data_changed()
