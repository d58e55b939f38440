"""Recall of the approximate vector indexes against exact search, by search breadth:
usearch's `expansion_search` (the SQLite store's vector index file) and pgvector's
`hnsw.ef_search` (the PostgreSQL store's HNSW index).

    python benchmarks/ann_recall.py [--chunks 100000] [--stores sqlite,postgres]
                                    [--data clustered,random] [--queries 50]
                                    [--breadths 64,128,...] [--postgres auto|URL|none]
                                    [--no-iterative]

Vectors (384 dimensions, seeded): `clustered` as benchmarks/scale.py makes them
(each chunk its topic's direction plus noise, 1,000 topics); `random`: unclustered
unit vectors, whose nearest neighbours are barely nearer than the rest (the worst
case of every graph index; no embedding model makes them). A question is a stored
vector plus noise (cosine ~0.7 to it), as in scale.py.

Each index is built as the stores build theirs: usearch through `ann.new_index`,
calibrated (`ann.calibrate`: the breadth the store records for it), saved and
memory-mapped (`ann.VectorIndex`); pgvector's `hnsw (vector_cosine_ops)` with its
defaults (m 16, ef_construction 64), built after loading the rows (the store builds
it as rows arrive; the graph is of the same kind). A search fetches as the stores
do, 4 passages per chunk wanted (40 for a top-10 search, 400 for hybrid's depth
100), and the candidates are re-scored exactly; recall@10 is the share of the exact
top 10 among the re-scored top 10. PostgreSQL also searches a tenth of the rows
(`1/10 rows`: a WHERE after the index's ORDER BY, as a collection filter is; the
store's breadth for it is that of ten times the passages): with pgvector 0.8 or
later the scan goes on past ef_search (the store's `hnsw.iterative_scan`;
`--no-iterative` measures without it), and an answer of fewer than 40 (while more
qualify) is replaced by an exact scan, as the store does. Milliseconds are the
search alone (with that exact scan), one question at a time. `*` marks the breadth
the store uses by default. The SQLite calibration's seconds are printed to stderr.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from figures import Figures, add_json_option
from quoteproof.store import ann
from quoteproof.store.postgres import ef_search, scans_iteratively
from scale import CHUNK_NOISE, DIMENSIONS, QUESTION_NOISE, TOPICS, postgres_url

TOP = 10
FETCH_PER_CHUNK = 4  # the stores' _PASSAGES_FETCHED
MODES = {"top 10": (TOP, 1), "depth 100": (100, 1)}
"""Search -> (chunks wanted, 1 in how many rows qualify): passages fetched x4."""
FILTERED = {"1/10 rows": (TOP, 10)}
"""PostgreSQL's filtered search: only every 10th row qualifies (a collection of a
tenth of the index), tested by the WHERE clause after the index's ORDER BY."""
PG_MAX_EF = 1000


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=-1, keepdims=True)).astype(np.float32)


def make_data(kind: str, count: int, queries: int, seed: int = 29) -> tuple[np.ndarray, np.ndarray]:
    """`count` stored unit vectors of `kind` and `queries` question vectors near some."""
    rng = np.random.default_rng(seed)
    scale = 1 / np.sqrt(DIMENSIONS)
    if kind == "clustered":
        topics = unit(rng.standard_normal((TOPICS, DIMENSIONS)))
        chosen = topics[rng.integers(TOPICS, size=count)]
        stored = unit(chosen + rng.standard_normal((count, DIMENSIONS)) * CHUNK_NOISE * scale)
    else:
        stored = unit(rng.standard_normal((count, DIMENSIONS)))
    sources = stored[rng.integers(count, size=queries)]
    asked = unit(sources + rng.standard_normal(sources.shape) * QUESTION_NOISE * scale)
    return stored, asked


Search = Callable[[np.ndarray, int, int, int], Sequence[int]]
"""(question, passages fetched, breadth, 1 in how many rows qualify) -> stored row
numbers, nearest first."""


@dataclass(frozen=True)
class Point:
    """Recall and latency of one index at one breadth."""

    store: str
    data: str
    chunks: int
    mode: str
    breadth: int
    recall: float
    p50: float
    p95: float
    default: bool  # the breadth the store uses

    def line(self) -> str:
        mark = "*" if self.default else " "
        return (
            f"{self.store:9} {self.data:9} {self.chunks:8,} {self.mode:9} {self.breadth:7d}{mark} "
            f"{self.recall:9.3f} {self.p50:7.2f} {self.p95:7.2f}"
        )


HEADER = (
    f"{'store':9} {'data':9} {'chunks':>8} {'search':9} {'breadth':>8} "
    f"{'recall@10':>9} {'p50 ms':>7} {'p95 ms':>7}"
)


def exact_top(qualifying: np.ndarray, asked: np.ndarray, rows: np.ndarray) -> list[set[int]]:
    """The row numbers (`rows`) of the `TOP` of `qualifying` nearest to each of
    `asked`, 64 questions to a matrix product."""
    exact = []
    for at in range(0, len(asked), 64):
        scores = asked[at : at + 64] @ qualifying.T
        top = np.argpartition(-scores, TOP - 1, axis=1)[:, :TOP]
        exact += [set(rows[found].tolist()) for found in top]
    return exact


def sweep(
    search: Search,
    stored: np.ndarray,
    asked: np.ndarray,
    breadths: list[int],
    default: Callable[[int], int],
    modes: dict[str, tuple[int, int]] = MODES,
) -> Iterator[tuple[str, int, float, float, float, bool]]:
    """(mode, breadth, recall@10, p50 ms, p95 ms, is the default) for each of `modes`
    and each breadth at least the passages fetched (and the store's default breadth)."""
    for mode, (wanted, share) in modes.items():
        rows = np.arange(0, len(stored), share)  # those that qualify
        exact = exact_top(stored[rows], asked, rows)
        fetch = FETCH_PER_CHUNK * wanted
        chosen = default(fetch * share)  # the store widens a filtered search
        for breadth in sorted({*(b for b in breadths if b >= fetch), chosen}):
            found, times = 0, []
            for question, truth in zip(asked, exact, strict=True):
                started = time.perf_counter()
                answer = search(question, fetch, breadth, share)
                times.append((time.perf_counter() - started) * 1000)
                candidates = np.fromiter(answer, dtype=np.int64)
                order = np.argsort(-(stored[candidates] @ question), kind="stable")
                found += len(truth & set(candidates[order[:TOP]].tolist()))
            p50, p95 = np.percentile(times, [50, 95])
            recall = found / (TOP * len(asked))
            yield mode, breadth, recall, float(p50), float(p95), breadth == chosen


def batches(keys: np.ndarray, stored: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """`keys` and `stored` 4,096 rows at a time, as the store reads them."""
    for at in range(0, len(stored), 4096):
        yield keys[at : at + 4096], stored[at : at + 4096]


def usearch_search(stored: np.ndarray, folder: Path) -> tuple[Search, Callable[[int], int]]:
    """A usearch index of `stored` (keys = row numbers) built, calibrated, saved and
    mapped as the SQLite store's vector index file is; and its default breadth by
    passages fetched."""
    index = ann.new_index(DIMENSIONS)
    keys = np.arange(len(stored), dtype=np.uint64)
    index.add(keys, stored)
    sample = np.unique(np.linspace(0, len(stored) - 1, ann.SAMPLES).round().astype(np.int64))
    started = time.perf_counter()
    breadth = ann.calibrate(index, stored[sample], lambda: batches(keys, stored))
    seconds = time.perf_counter() - started
    print(f"  calibrated: breadth {breadth} in {seconds:.1f} s", file=sys.stderr, flush=True)
    path = folder / "vectors.usearch"
    index.save(str(path))
    mapped = ann.VectorIndex(path, breadth)

    def search(question: np.ndarray, fetch: int, breadth: int, share: int) -> list[int]:
        assert share == 1, "the SQLite store's file is searched unfiltered"
        return mapped.search(question, fetch, breadth)

    return search, lambda fetch: max(breadth, fetch)


def pgvector_search(stored: np.ndarray, url: str, table: str, iterative: bool) -> Search:
    """A pgvector HNSW index of `stored` in `table` (ids = row numbers), searched as
    the store searches: the WHERE after the index's ORDER BY, an iterative scan where
    pgvector has it (and `iterative`), an exact scan when the index answers short."""
    import psycopg
    from pgvector.psycopg import register_vector

    db = psycopg.connect(url, autocommit=True)
    db.execute("CREATE EXTENSION IF NOT EXISTS vector")
    register_vector(db)
    db.execute(f"DROP TABLE IF EXISTS {table}")
    db.execute(f"CREATE TABLE {table} (id integer PRIMARY KEY, vector vector({DIMENSIONS}))")
    with (
        db.cursor() as cursor,
        cursor.copy(f"COPY {table} (id, vector) FROM STDIN WITH (FORMAT BINARY)") as copy,
    ):
        copy.set_types(["int4", "vector"])
        for number, row in enumerate(stored):
            copy.write_row((number, row))
    db.execute("SET maintenance_work_mem = '1GB'")
    db.execute(f"CREATE INDEX ON {table} USING hnsw (vector vector_cosine_ops)")
    db.execute("SET enable_seqscan = off")
    db.execute("SET enable_sort = off")  # the index answers, as at scale
    if iterative and scans_iteratively(db):
        db.execute("SET hnsw.iterative_scan = strict_order")
    print(f"  pgvector: iterative scan {iterative and scans_iteratively(db)}", file=sys.stderr)

    def search(question: np.ndarray, fetch: int, breadth: int, share: int) -> list[int]:
        db.execute(f"SET hnsw.ef_search = {int(breadth)}")
        where = f"mod(id, {int(share)}) = 0"
        sql = f"SELECT id FROM {table} WHERE {where} ORDER BY vector <=> %s LIMIT %s"
        rows = db.execute(sql, (question, fetch)).fetchall()
        if len(rows) < min(fetch, -(-len(stored) // share)):  # cut short: the exact scan
            with db.transaction():
                db.execute("SET LOCAL enable_indexscan = off")
                db.execute("SET LOCAL enable_seqscan = on")
                db.execute("SET LOCAL enable_sort = on")
                # unprepared: a plan cached for the index query ignores the settings
                rows = db.execute(sql, (question, fetch), prepare=False).fetchall()
        return [row[0] for row in rows]

    return search


def indexes(
    stores: str,
    stored: np.ndarray,
    kind: str,
    folder: Path,
    url: str | None,
    breadths: list[int],
    iterative: bool = True,
) -> Iterator[tuple[str, Search, Callable[[int], int], list[int], dict[str, tuple[int, int]]]]:
    """(store, search, its default breadth by passages fetched, breadths to try, search
    modes) of each store asked for, built over `stored`."""
    if "sqlite" in stores:
        print(f"  building usearch ({kind}) ...", file=sys.stderr, flush=True)
        search, default = usearch_search(stored, folder)
        yield "sqlite", search, default, breadths, MODES
    if url is not None:
        print(f"  building pgvector ({kind}) ...", file=sys.stderr, flush=True)
        search = pgvector_search(stored, url, f"recall_{kind}", iterative)
        tried = [b for b in breadths if b <= PG_MAX_EF]
        yield "postgres", search, ef_search, tried, MODES | FILTERED


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100_000, help="Vectors indexed.")
    parser.add_argument("--stores", default="sqlite,postgres", help="sqlite, postgres or both.")
    parser.add_argument("--data", default="clustered,random", help="clustered, random or both.")
    parser.add_argument("--queries", type=int, default=50, help="Questions per breadth.")
    parser.add_argument(
        "--breadths", default="64,128,256,512,1000,2048,4096,8192", help="Breadths tried."
    )
    parser.add_argument("--postgres", default="auto", help="URL, 'auto' (pgserver) or 'none'.")
    parser.add_argument(
        "--no-iterative", action="store_true", help="No pgvector iterative scan (as before 0.8)."
    )
    add_json_option(parser)
    args = parser.parse_args(argv)
    breadths = [int(b) for b in args.breadths.split(",")]
    points: list[Point] = []
    print(HEADER, flush=True)
    postgres = args.postgres if "postgres" in args.stores else "none"
    with tempfile.TemporaryDirectory() as folder, postgres_url(postgres) as url:
        for kind in args.data.split(","):
            stored, asked = make_data(kind, args.chunks, args.queries)
            for store, search, default, tried, modes in indexes(
                args.stores, stored, kind, Path(folder), url, breadths, not args.no_iterative
            ):
                for figures in sweep(search, stored, asked, tried, default, modes):
                    points.append(Point(store, kind, args.chunks, *figures))
                    print(points[-1].line(), flush=True)
    print("(breadth: usearch expansion_search / pgvector hnsw.ef_search; * the store's")
    print(" default; recall@10 of the passages fetched, 40 for a top-10 search and 400 for")
    print(" hybrid's depth 100, re-scored exactly; ms: the index search alone)")
    out = Figures("ann_recall")
    for point in points:
        label = f"{point.store} {point.data} {point.chunks:,} {point.mode} at {point.breadth}"
        out.add(f"{label}: recall@10", point.recall, "")
        out.add(f"{label}: p95, ms", point.p95, "ms")
    out.data = [asdict(point) for point in points]
    out.write(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
