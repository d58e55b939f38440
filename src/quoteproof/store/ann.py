"""An approximate nearest-neighbour index of a SQLite index's vectors: a usearch HNSW
graph in a file beside the database, memory-mapped by every process that searches.

Why usearch: it is maintained, has wheels for every platform quoteproof supports,
and can *view* a saved index (memory-map it) instead of loading it, so a searching
process holds only the pages a query touches and processes share one copy in the
page cache; hnswlib and faiss-cpu load the whole graph into each process.

The file covers the vectors of the `embeddings` rows up to one rowid (`upto`,
recorded in the `meta` table under `UPTO_KEY` and written into the file's name).
Its keys are embeddings rowids, several vectors per key (a chunk's passages); the
vectors are stored as float16 (search then recomputes each candidate's exact float32
similarity from the database). Rows after `upto` are searched exactly by the reader.

A writer calls `fold` after storing vectors: once the table holds `ANN_FROM`
vectors the file is built, and from then on the rows after `upto` are added to it
whenever there are `FOLD_EVERY` of them. Folding runs under a file lock (a second
writer skips it), writes a new file and records it in one transaction; the old file
is removed (a process that still maps it keeps reading it until it reopens).
Embedding rows are never deleted, so rowids only grow.

Search breadth (usearch's `expansion_search`, the candidates a graph search keeps)
is chosen from the data (`calibrate`): the smallest of `BREADTHS` at which searches
for `SAMPLES` of the new vectors find `CALIBRATION_RECALL` of their exact 10 nearest
neighbours, recorded under `BREADTH_KEY` with the file's vector count then under
`CALIBRATED_KEY`. A fold chooses it again only when the file has grown by
`RECALIBRATE_GROWTH` since (or none is recorded); otherwise the file keeps the
recorded breadth. Calibration searches the sample at every breadth up to the one
chosen, which at a million unclustered vectors takes minutes: doing it at every fold
(each `FOLD_EVERY` rows) made it most of the ingest time, while the breadth a graph
needs changes only as the graph grows by a good part of itself.

The margin of `CALIBRATION_RECALL` over `TARGET_RECALL` covers the sample's error:
with 50 vectors, 100,000 unclustered random ones measured 0.954 at 4,096 where
questions then found 0.934 (256 vectors measured 0.939). Clustered vectors, as
embedding models make them, need the smallest (benchmarks/ann_recall.py: recall@10
1.00 at 64 at 100,000 vectors); unclustered random vectors, whose neighbours are
barely nearer than the rest, need thousands (8,192 at 100,000 of them, where
questions reach 0.99), `BREADTHS[-1]` at most.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import numpy as np

ANN_FROM = 50_000
"""Embedding rows from which a SQLite index gets an approximate vector index. Below
it exact search reads at most ~75 MB of vectors (384 dimensions) per process and
takes a few milliseconds; above it the matrix each process holds and the seconds a
cold process spends reading it grow with the corpus, while the graph does not."""

FOLD_EVERY = 10_000
"""Embedding rows outside the file at which a writer adds them to it (readers search
at most this many, plus those of one write, exactly)."""

UPTO_KEY = "vector_index_upto"
"""The `meta` key holding the last embeddings rowid the vector index file covers."""

BREADTH_KEY = "vector_index_breadth"
"""The `meta` key holding the search breadth `calibrate` chose for the file."""

CALIBRATED_KEY = "vector_index_calibrated"
"""The `meta` key holding the number of vectors the file held when `calibrate` last
chose its breadth."""

RECALIBRATE_GROWTH = 0.25
"""The growth of the file since its breadth was chosen (a share of the vectors it
held then) from which a fold chooses the breadth again."""

TARGET_RECALL = 0.95
"""The recall@10 against exact search that searches should reach."""

CALIBRATION_RECALL = 0.97
"""The recall@10 that `calibrate` asks of its sample: `TARGET_RECALL` plus a margin
of about four standard errors of a `SAMPLES`-vector estimate near 0.95."""

SAMPLES = 256
"""The stored vectors `calibrate` searches for (spread evenly over the new rows)."""

BREADTHS = (64, 128, 256, 512, 1024, 2048, 4096, 8192)
"""The search breadths `calibrate` tries, smallest first: 8,192 cost 135-167 ms per
search (p50) at 100,000 vectors on two cores under load, within the hybrid p95
budget (500 ms)."""

_CONNECTIVITY = 16
_EXPANSION_ADD = 128
_BATCH = 4096
_TOP = 10
_FETCH = 40  # the vectors a top-10 search asks for (four per chunk wanted)


def _usearch_index() -> Any:
    """usearch's `Index` class, loaded after ONNX Runtime when that is installed: a
    process that loads usearch first crashes when it then loads ONNX Runtime (a clash
    of their native libraries; the other order works). Raises ImportError without
    usearch."""
    with suppress(ImportError):
        import onnxruntime  # noqa: F401
    from usearch.index import Index

    return Index


def available() -> bool:
    """Whether usearch is installed (without it search stays exact)."""
    try:
        _usearch_index()
    except ImportError:
        return False
    return True


def index_path(directory: Path, upto: int) -> Path:
    """The file of the vector index covering embeddings rows up to `upto`."""
    return directory / f"vectors-{upto}.usearch"


def recorded_upto(db: sqlite3.Connection) -> int:
    """The rowid up to which the vector index file covers embeddings (0: no file)."""
    row = db.execute("SELECT value FROM meta WHERE key = ?", (UPTO_KEY,)).fetchone()
    return int(row[0]) if row is not None else 0


def recorded_breadth(db: sqlite3.Connection) -> int:
    """The search breadth recorded for the vector index file (the smallest of
    `BREADTHS` for a file written before breadths were recorded)."""
    row = db.execute("SELECT value FROM meta WHERE key = ?", (BREADTH_KEY,)).fetchone()
    return int(row[0]) if row is not None else BREADTHS[0]


def recorded_calibration(db: sqlite3.Connection) -> int:
    """The number of vectors the file held when its breadth was chosen (0: not
    recorded, as for a file written before it was)."""
    row = db.execute("SELECT value FROM meta WHERE key = ?", (CALIBRATED_KEY,)).fetchone()
    return int(row[0]) if row is not None else 0


def due_for_calibration(vectors: int, calibrated: int) -> bool:
    """Whether a file of `vectors` vectors, whose breadth was chosen at `calibrated`
    vectors (0: never), needs its breadth chosen again (`RECALIBRATE_GROWTH`)."""
    return calibrated <= 0 or vectors >= calibrated * (1 + RECALIBRATE_GROWTH)


class VectorIndex:
    """A memory-mapped vector index file: `search` returns embeddings rowids."""

    def __init__(self, path: Path, breadth: int = BREADTHS[0]) -> None:
        Index = _usearch_index()

        self._index: Any = Index.restore(str(path), view=True)
        if self._index is None:
            raise OSError(f"{path} is not a vector index")
        self.breadth = breadth

    @property
    def size(self) -> int:
        """The number of vectors in the file."""
        return len(self._index)

    def search(self, vector: np.ndarray, count: int, expansion: int | None = None) -> list[int]:
        """The rowids of the (about) `count` vectors nearest to `vector`, nearest
        first, each once; the graph search keeps `expansion` candidates (default:
        the file's breadth, or `count` when more)."""
        self._index.expansion_search = expansion or max(self.breadth, count)
        matches = self._index.search(vector, count)
        return list(dict.fromkeys(int(key) for key in matches.keys))


@contextmanager
def _locked(directory: Path) -> Iterator[bool]:
    """Hold the folding lock of `directory` if no other process holds it (yields
    whether this one does)."""
    with open(directory / "vectors.lock", "a+b") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def fold(
    db: sqlite3.Connection,
    directory: Path,
    dimensions: int,
    record: Callable[[int, int, int], None],
    *,
    start: int = ANN_FROM,
    every: int = FOLD_EVERY,
) -> bool:
    """Build or extend the vector index file when due (see the module) and choose
    its search breadth when due (`due_for_calibration`; else the recorded one is
    kept); `record(upto, breadth, calibrated)` stores the file's last rowid, its
    breadth and the vector count at which that was chosen (and whatever else marks
    the change) in one transaction. Returns whether a new file was written."""
    if not available():
        return False
    with _locked(directory) as mine:
        if not mine:
            return False
        upto = recorded_upto(db)
        row = db.execute(
            "SELECT count(*), max(rowid) FROM embeddings WHERE rowid > ?", (upto,)
        ).fetchone()
        new, last = int(row[0]), row[1]
        if new == 0 or new < (every if upto else start):
            return False
        index = _load_or_create(directory, upto, dimensions)
        step = max(1, new // SAMPLES)
        sample_keys, samples = [], []
        for keys, vectors in _rows(db, upto, last, dimensions):
            index.add(keys, vectors)
            sample_keys.append(keys[::step])
            samples.append(vectors[::step])
        calibrated = recorded_calibration(db) if upto else 0
        if due_for_calibration(len(index), calibrated):
            breadth = calibrate(index, np.concatenate(sample_keys), np.concatenate(samples))
            calibrated = len(index)
        else:
            breadth = recorded_breadth(db)
        temporary = directory / f".vectors-{last}.usearch.tmp"
        index.save(str(temporary))
        os.replace(temporary, index_path(directory, last))
        record(last, breadth, calibrated)
        for old in directory.glob("vectors-*.usearch"):
            if old.name != index_path(directory, last).name:
                old.unlink(missing_ok=True)
        return True


def calibrate(index: Any, keys: np.ndarray, vectors: np.ndarray) -> int:
    """The smallest of `BREADTHS` at which `sampled_recall` of `vectors` (stored
    under `keys`) reaches `CALIBRATION_RECALL`; the largest when none does."""
    exact = _nearest(index.search(vectors, _FETCH, exact=True), keys)
    for breadth in BREADTHS:
        if _recall(index, keys, vectors, exact, breadth) >= CALIBRATION_RECALL:
            return breadth
    return BREADTHS[-1]


def sampled_recall(index: Any, keys: np.ndarray, vectors: np.ndarray, breadth: int) -> float:
    """The share of the 10 nearest keys that exact search finds for `vectors` (stored
    under `keys`, each key left out of its own results) that a search of `index` at
    `breadth` finds among the first 10 of the 40 vectors a top-10 search asks for."""
    exact = _nearest(index.search(vectors, _FETCH, exact=True), keys)
    return _recall(index, keys, vectors, exact, breadth)


def _recall(
    index: Any, keys: np.ndarray, vectors: np.ndarray, exact: list[list[int]], breadth: int
) -> float:
    """`sampled_recall` given the exact nearest keys `exact` of each of `vectors`."""
    index.expansion_search = breadth
    approximate = _nearest(index.search(vectors, _FETCH), keys)
    hits = sum(len(set(a) & set(e)) for a, e in zip(approximate, exact, strict=True))
    wanted = sum(len(found) for found in exact)
    return hits / wanted if wanted else 1.0


def _nearest(matches: Any, keys: np.ndarray) -> list[list[int]]:
    """The first 10 distinct keys of each row of usearch batch `matches`, other than
    that row's own key."""
    out = []
    for row, own in enumerate(keys):
        found = matches.keys[row][: matches.counts[row]]
        out.append([key for key in dict.fromkeys(map(int, found)) if key != own][:_TOP])
    return out


def _load_or_create(directory: Path, upto: int, dimensions: int) -> Any:
    Index = _usearch_index()

    if upto:
        loaded = Index.restore(str(index_path(directory, upto)))
        if loaded is not None:
            return loaded
    return new_index(dimensions)


def new_index(dimensions: int) -> Any:
    """An empty usearch index as `fold` builds them (cosine, float16, several vectors
    per key, the graph's connectivity and build breadth of this module)."""
    Index = _usearch_index()

    return Index(
        ndim=dimensions,
        metric="cos",
        dtype="f16",
        connectivity=_CONNECTIVITY,
        expansion_add=_EXPANSION_ADD,
        multi=True,
    )


def _rows(
    db: sqlite3.Connection, after: int, last: int, dimensions: int
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The embeddings rows after `after` up to `last`, as (keys, vectors) batches:
    one key per vector (a row's passages share its rowid)."""
    cursor = db.execute(
        "SELECT rowid, vector FROM embeddings WHERE rowid > ? AND rowid <= ? ORDER BY rowid",
        (after, last),
    )
    while rows := cursor.fetchmany(_BATCH):
        vectors = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(-1, dimensions)
        keys = np.repeat(
            np.fromiter((r[0] for r in rows), dtype=np.uint64, count=len(rows)),
            [len(r[1]) // (4 * dimensions) for r in rows],
        )
        yield keys, vectors
