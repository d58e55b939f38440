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
for questions made from `SAMPLES` of the file's vectors (spread evenly over all of
its rows, not only those just added) reach `TARGET_RECALL` of their exact 10 nearest
neighbours by a margin of the sample's error (below), recorded under `BREADTH_KEY`
with the file's vector count then under `CALIBRATED_KEY`. A fold chooses it again
only when the file has grown by `RECALIBRATE_GROWTH` since (or none is recorded);
otherwise the file keeps the recorded breadth. Calibration searches the sample at
every breadth up to the one chosen and finds the sample's exact neighbours by
reading every vector of the file once per doubling of the questions it asks:
doing it at every fold (each `FOLD_EVERY` rows) made it most of the ingest time,
while the breadth a graph needs changes only as the graph grows by a good part of
itself.

The questions are not the stored vectors themselves: a question's embedding is never
a stored vector, and a graph finds the neighbours of its own points more easily than
those of a point between them, so a stored-vector sample overestimates the recall
questions get: on 200,000 clustered vectors (those of benchmarks/ann_recall.py)
stored vectors found all their 10 nearest at 64, where questions found 0.946 (its
graph now gets 128: 1.000); on 400,000, 0.984 at 64, where questions found 0.853
(128 now: 0.959); the scale benchmark's questions found 0.935 at 1,000,000 at the
breadth such a sample chose. Each sampled vector is moved off the stored points by
isotropic Gaussian noise of its own length (`QUESTION_NOISE`), so a question's
cosine to the vector it was made from is about 0.71, and the noise lowers its
similarity to every other stored vector alike, so its nearest neighbours stand out
from the rest less than a stored vector's do, as a question's do. Real questions sit
that far from what they find: with the default model (all-MiniLM-L6-v2), the
questions of evalsets/nurse.jsonl and labels.jsonl have cosine 0.55 / 0.69 / 0.81
(p10, median, p90) to their gold quotes, and the scale and recall benchmarks make
their questions the same way (cosine ~0.7 to a stored vector). Noise in every
direction is the pessimistic case: a real question differs from its passage along
the directions its model gives meaning, where the stored vectors lie too.

The rule for a breadth: ask the first `_FIRST` questions (in a fixed mixed order of
the sample), then twice as many each time up to all `SAMPLES`; pass the breadth
once their mean recall@10 less `MARGIN_ERRORS` (3) standard errors reaches
`TARGET_RECALL`, fail it once the mean plus 3 standard errors stays below, and fail
it when all the questions still leave it undecided. The standard error is that of a
mean over questions (the spread of one question's recall over the square root of
their number): a question's 10 neighbours are found or missed together, so the
binomial error of its 10 hits counted as independent ones understates the error
2.5-3.5 times (at 200,000 clustered vectors and breadth 64 one question's recall
spreads by 0.15-0.21, where 10 independent hits at 0.96 spread by 0.06); that
binomial spread at the target is the least taken. With up to four looks at 3
standard errors a breadth whose recall over all questions is below the target
passes with odds under 0.6%; 2,048 questions near 0.96 have a standard error of
about 0.004, so a breadth passes when the sample finds about 0.963 or more. Before,
256 questions had to find 0.97: their error is about 0.012 there, and five such
samples of one 200,000-vector graph measured 0.947-0.978 at breadth 64, so a
lucky sample could pass a breadth at which questions find under 0.95. On a
400,000-vector graph (benchmarks/ann_recall.py's clustered data) where 3,000
questions found 0.953 +- 0.004 at 128 and 0.989 at 256, one of three 256-question
samples passed 128; three 2,048-question ones chose 256, in 18-22 s on two loaded
cores against 14-17 s before (docs/benchmarks.md, "Vector search breadth").
Asking an eighth of the sample first keeps the cost down where the answer is
clear: a breadth far above or below the target is decided on 256 questions, and
the exact search is done only for the questions asked. Before that: with 50 stored
vectors as questions (an earlier calibration), 100,000 unclustered random ones
measured 0.954 at 4,096 where questions then found 0.934 (256 vectors measured
0.939). Clustered vectors, as
embedding models make them, need the smallest while each cluster is small
(benchmarks/ann_recall.py: questions' recall@10 0.99-1.00 at 64 at 100,000 vectors,
100 to a cluster), more as clusters fill with near neighbours (128 at 200,000, a
search then taking under a millisecond at the median); unclustered random vectors,
whose neighbours are barely nearer than the rest, need thousands (8,192 at 100,000
of them, where questions reach 0.99), `BREADTHS[-1]` at most.
"""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator
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

MARGIN_ERRORS = 3.0
"""How many standard errors of its sample's recall `calibrate` asks above (to pass
a breadth) or finds below (to fail one) `TARGET_RECALL`: with its four looks at a
growing sample, a breadth whose recall over all questions is below the target
passes with odds under 0.6% (see the module)."""

SAMPLES = 2048
"""The most stored vectors `calibrate` makes its questions from (spread evenly over
the file's rows); the standard error of their recall near 0.96 is about 0.004, so
a breadth passes at a sample recall of about 0.963."""

_FIRST = 256
"""The questions `calibrate` asks first at a breadth (then twice as many each time,
up to `SAMPLES`, while the sample's recall leaves the breadth undecided)."""

QUESTION_NOISE = 1.0
"""The length of the noise `questions` adds to a vector, as a share of its length:
1.0 puts a question at cosine ~0.71 to its vector (see the module)."""

_QUESTION_SEED = 0x9E3779B97F4A7C15
"""Seeds the noise of `questions`, so that a sample always gets the same questions
(and an index the same breadth): an arbitrary large constant, not a small one that
seeded data may share (the benchmarks seed theirs with 29; with that seed the noise
was their topic directions themselves, and each question a point of another topic)."""

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
        for keys, vectors in _rows(db, upto, last, dimensions):
            index.add(keys, vectors)
        calibrated = recorded_calibration(db) if upto else 0
        if due_for_calibration(len(index), calibrated):
            sample = _sample(db, last, dimensions)
            breadth = calibrate(index, sample, lambda: _rows(db, 0, last, dimensions))
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


Batches = Callable[[], Iterable[tuple[np.ndarray, np.ndarray]]]
"""Every (keys, vectors) of an index, in batches, each call from the start."""


def calibrate(index: Any, sample: np.ndarray, stored: Batches) -> int:
    """The smallest of `BREADTHS` at which the `questions` of `sample` (vectors of
    `index`, in an order `_order` mixes) pass `_passes`'s test, the largest when none
    does; `stored` gives every vector of `index` (for exact search, which is done
    only for as many questions as the test asks for)."""
    asked = questions(sample)[_order(len(sample))]
    exact: list[list[int]] = []

    def nearest(count: int) -> list[list[int]]:
        if len(exact) < count:
            exact.extend(_exact_nearest(asked[len(exact) : count], stored()))
        return exact[:count]

    for breadth in BREADTHS:
        if _passes(index, asked, nearest, breadth):
            return breadth
    return BREADTHS[-1]


def sampled_recall(
    index: Any, sample: np.ndarray, stored: Batches, breadth: int
) -> tuple[float, float]:
    """The recall@10 of searches of `index` at `breadth` for the `questions` of all
    of `sample` (the mean over questions of the share of its exact 10 nearest keys
    found among the first 10 of the 40 vectors a top-10 search asks for) and its
    standard error; `stored` as for `calibrate`."""
    asked = questions(sample)
    return _estimate(_recalls(index, asked, _exact_nearest(asked, stored()), breadth))


def _passes(
    index: Any, asked: np.ndarray, nearest: Callable[[int], list[list[int]]], breadth: int
) -> bool:
    """Whether searches at `breadth` reach `TARGET_RECALL` for the questions `asked`
    by the module's rule: the first `_FIRST` of them, then twice as many each time
    (`nearest(count)`: the exact nearest keys of the first `count`), until the
    recall of those asked lies `MARGIN_ERRORS` standard errors above the target
    (passed) or below it (failed); still undecided with all of them: failed."""
    found: list[float] = []
    done, count = 0, _FIRST
    while True:
        count = min(count, len(asked))
        found += _recalls(index, asked[done:count], nearest(count)[done:], breadth)
        done = count
        recall, error = _estimate(found)
        if recall - MARGIN_ERRORS * error >= TARGET_RECALL:
            return True
        if recall + MARGIN_ERRORS * error < TARGET_RECALL or done == len(asked):
            return False
        count *= 2


def _order(count: int) -> np.ndarray:
    """A fixed mixed order of `count` sampled rows, so that the first questions
    `_passes` asks come from all over the file, not from its first rows."""
    return np.random.default_rng(_QUESTION_SEED).permutation(count)


def _estimate(found: list[float]) -> tuple[float, float]:
    """The mean of the questions' recalls `found` and its standard error: the spread
    of one question's recall over the square root of their number, the spread taken
    as measured but at least that of `_TOP` independent hits at `TARGET_RECALL` (so
    that a few questions that all found everything do not pass as certain)."""
    recalls = np.asarray(found, dtype=np.float64)
    if not len(recalls):
        return 1.0, 0.0
    least = np.sqrt(TARGET_RECALL * (1 - TARGET_RECALL) / _TOP)
    spread = max(float(recalls.std(ddof=1)) if len(recalls) > 1 else 0.0, least)
    return float(recalls.mean()), spread / np.sqrt(len(recalls))


def questions(vectors: np.ndarray) -> np.ndarray:
    """Stand-ins for questions near `vectors` (rows): each row plus isotropic Gaussian
    noise of `QUESTION_NOISE` times its length, as float32 unit rows (cosine ~0.71 to
    their row). The same rows always give the same questions."""
    rows = np.asarray(vectors, dtype=np.float64)
    lengths = np.linalg.norm(rows, axis=1, keepdims=True)
    noise = np.random.default_rng(_QUESTION_SEED).standard_normal(rows.shape)
    moved = rows + noise * (QUESTION_NOISE * lengths / np.sqrt(rows.shape[1]))
    asked: np.ndarray = (moved / np.linalg.norm(moved, axis=1, keepdims=True)).astype(np.float32)
    return asked


def _recalls(index: Any, asked: np.ndarray, exact: list[list[int]], breadth: int) -> list[float]:
    """Each question's share of its exact nearest keys `exact` that a search of
    `index` at `breadth` finds (questions without any are left out)."""
    index.expansion_search = breadth
    matches = index.search(asked, _FETCH)
    if len(asked) == 1:  # usearch answers a batch of one unbatched
        rows = [matches.keys]
    else:
        rows = [matches.keys[row][: matches.counts[row]] for row in range(len(asked))]
    found = [list(dict.fromkeys(map(int, keys)))[:_TOP] for keys in rows]
    return [len(set(a) & set(e)) / len(e) for a, e in zip(found, exact, strict=True) if e]


def _exact_nearest(
    asked: np.ndarray, stored: Iterable[tuple[np.ndarray, np.ndarray]]
) -> list[list[int]]:
    """The first 10 distinct keys of each of `asked` among its 40 most similar
    vectors of `stored` ((keys, unit vectors) batches): a matrix product per batch,
    so memory holds one batch's scores (`len(asked)` x the batch's rows) at a time."""
    best = np.empty((len(asked), 0), dtype=np.float32)
    keys = np.empty((len(asked), 0), dtype=np.uint64)
    for batch_keys, vectors in stored:
        scores = asked @ np.asarray(vectors, dtype=np.float32).T
        if scores.shape[1] > _FETCH:
            top = np.argpartition(scores, -_FETCH, axis=1)[:, -_FETCH:]
        else:
            top = np.broadcast_to(np.arange(scores.shape[1]), scores.shape)
        best = np.concatenate([best, np.take_along_axis(scores, top, axis=1)], axis=1)
        keys = np.concatenate([keys, np.asarray(batch_keys, dtype=np.uint64)[top]], axis=1)
        if best.shape[1] > _FETCH:
            kept = np.argpartition(best, -_FETCH, axis=1)[:, -_FETCH:]
            best = np.take_along_axis(best, kept, axis=1)
            keys = np.take_along_axis(keys, kept, axis=1)
    order = np.argsort(-best, axis=1, kind="stable")
    ranked = np.take_along_axis(keys, order, axis=1)
    return [list(dict.fromkeys(map(int, row)))[:_TOP] for row in ranked]


def _sample(db: sqlite3.Connection, last: int, dimensions: int) -> np.ndarray:
    """The first vectors of `SAMPLES` embeddings rows spread evenly over the rowids
    up to `last` (all of the rows when there are fewer)."""
    first = db.execute("SELECT min(rowid) FROM embeddings").fetchone()[0] or 1
    rowids = np.unique(np.linspace(first, last, SAMPLES).round().astype(np.int64))
    rows = db.execute(
        "SELECT vector FROM embeddings WHERE rowid IN (SELECT value FROM json_each(?))",
        (json.dumps(rowids.tolist()),),
    ).fetchall()
    return np.stack([np.frombuffer(r[0], dtype="<f4", count=dimensions) for r in rows])


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
