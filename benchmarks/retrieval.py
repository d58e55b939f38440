"""Retrieval quality and speed on BEIR SciFact (test qrels), next to bm25s.

For each retriever (BM25, dense, hybrid RRF, and hybrid + rerank when
`--rerank-model` is given) and each store (SQLite; PostgreSQL when available),
every test query is searched through `Index.search` and the chunks' documents
ranked: nDCG@10 and recall@100 against the qrels, and p50/p95 query latency
(query embedding included). bm25s, a reference BM25 implementation (English
stopwords, Snowball stemmer), is measured on the same documents in the same run.

It also ingests SciFact (5,183 abstracts) with embeddings, with a progress bar,
and prints embeddings/s next to raw sentence-transformers `encode` of the same
texts with the same batch size.

PostgreSQL: `--postgres URL`, or `auto` (default) to start a throwaway server with
`pgserver` when installed. Its vectors are copied from the SQLite run (same model,
same keys) rather than computed twice.

Run: .venv/bin/python benchmarks/retrieval.py [--queries N] [--rerank-model DIR] [--json FILE]
"""

from __future__ import annotations

import argparse
import math
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from rich.console import Console

import scifact
from figures import Figures, add_json_option
from quoteproof import Index
from quoteproof.model import Hit
from quoteproof.render.ingest import EmbedProgress
from quoteproof.retrieval.embedder import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_EMBED_MODEL,
    Embedder,
    resolve_model,
)
from quoteproof.retrieval.retriever import RetrievalSettings
from quoteproof.store.sqlite import DB_FILENAME
from quoteproof.store.vectors import EmbeddingSpace

CHUNK_DEPTH = 120
"""Chunks retrieved per query; a few abstracts have two chunks, so this gives 100 documents."""
EMBED_TARGET = 0.90
"""quoteproof's embeddings/s at ingest, as a share of raw `encode`, at least."""


@dataclass(frozen=True)
class Row:
    name: str
    store: str
    ndcg: float
    recall: float
    p50: float
    p95: float


def ndcg_at_10(ranked: list[str], relevant: dict[str, int]) -> float:
    """nDCG@10 with linear gains (as trec_eval and BEIR compute it)."""
    dcg = sum(relevant.get(doc, 0) / math.log2(i + 2) for i, doc in enumerate(ranked[:10]))
    ideal = sorted(relevant.values(), reverse=True)[:10]
    idcg = sum(gain / math.log2(i + 2) for i, gain in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at_100(ranked: list[str], relevant: dict[str, int]) -> float:
    """Share of the relevant documents among the first 100."""
    wanted = {doc for doc, gain in relevant.items() if gain > 0}
    return len(wanted & set(ranked[:100])) / len(wanted) if wanted else 0.0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def documents(hits: list[Hit]) -> list[str]:
    """The SciFact ids of the hits' documents, first occurrence first."""
    return list(dict.fromkeys(Path(h.chunk.source_path).stem for h in hits))


def measure(
    name: str,
    store: str,
    search: Callable[[str], list[str]],
    queries: dict[str, str],
    qrels: dict[str, dict[str, int]],
) -> Row:
    """Run every query through `search` (returns ranked doc ids) and score it."""
    ndcgs, recalls, latencies = [], [], []
    for query_id, relevant in qrels.items():
        started = time.perf_counter()
        ranked = search(queries[query_id])
        latencies.append((time.perf_counter() - started) * 1000)
        ndcgs.append(ndcg_at_10(ranked, relevant))
        recalls.append(recall_at_100(ranked, relevant))
    row = Row(
        name,
        store,
        statistics.mean(ndcgs),
        statistics.mean(recalls),
        percentile(latencies, 0.5),
        percentile(latencies, 0.95),
    )
    print(
        f"  {row.name:18} {row.store:10} {row.ndcg:8.3f} {row.recall:10.3f} "
        f"{row.p50:8.1f} {row.p95:8.1f}",
        flush=True,
    )
    return row


def retrievers(rerank_model: str | None) -> dict[str, RetrievalSettings]:
    named = {
        "quoteproof bm25": RetrievalSettings(retriever="bm25"),
        "quoteproof dense": RetrievalSettings(retriever="dense"),
        "quoteproof hybrid": RetrievalSettings(retriever="hybrid"),
    }
    if rerank_model:
        named["hybrid + rerank"] = RetrievalSettings(
            retriever="hybrid",
            rerank_model=rerank_model,
            rerank_candidates=CHUNK_DEPTH,
            rerank_keep=CHUNK_DEPTH,
        )
    return named


def evaluate_index(
    location: str | Path,
    store: str,
    queries: dict[str, str],
    qrels: dict[str, dict[str, int]],
    rerank_model: str | None,
) -> list[Row]:
    rows = []
    for name, settings in retrievers(rerank_model).items():
        with Index.open(location, retrieval=settings) as index:
            index.search("warm-up query", top_k=CHUNK_DEPTH)  # load models before timing

            def search(text: str, index: Index = index) -> list[str]:
                return documents(index.search(text, top_k=CHUNK_DEPTH))

            rows.append(measure(name, store, search, queries, qrels))
    return rows


def evaluate_bm25s(queries: dict[str, str], qrels: dict[str, dict[str, int]]) -> Row:
    import bm25s
    import Stemmer

    corpus = scifact.corpus()
    ids = list(corpus)
    stemmer = Stemmer.Stemmer("english")
    texts = [f"{title}\n\n{text}" for title, text in corpus.values()]
    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False),
        show_progress=False,
    )

    def search(text: str) -> list[str]:
        tokens = bm25s.tokenize([text], stopwords="en", stemmer=stemmer, show_progress=False)
        found, _ = retriever.retrieve(tokens, k=100, show_progress=False)
        return [ids[i] for i in found[0]]

    return measure("bm25s (reference)", "memory", search, queries, qrels)


def embed_with_progress(index: Index, console: Console) -> tuple[list[str], float]:
    """Embed the index's pending chunks with a progress bar; return the texts and
    vectors/s."""
    texts = [item.text for item in index.store.pending_embeddings()]
    started = time.perf_counter()
    Embedder().embed(texts[:DEFAULT_BATCH_SIZE])  # load and warm up, as raw_encode_rate does
    print(f"  model load and warm-up: {time.perf_counter() - started:.1f} s (not counted)")
    with EmbedProgress(console) as progress:
        report = index.embed(on_start=progress.start, on_progress=progress.advance)
    assert report.embedded == len(texts)
    return texts, report.per_second


def raw_encode_rate(texts: list[str]) -> float:
    """Vectors/s of plain sentence-transformers `encode` over `texts`."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(resolve_model(DEFAULT_EMBED_MODEL), device="cpu")
    model.encode(texts[:DEFAULT_BATCH_SIZE], batch_size=DEFAULT_BATCH_SIZE)
    started = time.perf_counter()
    model.encode(
        texts, batch_size=DEFAULT_BATCH_SIZE, normalize_embeddings=True, show_progress_bar=False
    )
    return len(texts) / (time.perf_counter() - started)


@contextmanager
def postgres(url: str) -> Iterator[str | None]:
    """Yield a PostgreSQL URL: `url` itself, a throwaway pgserver for `auto`, or None."""
    if url != "auto":
        yield url if url != "none" else None
        return
    try:
        import pgserver
    except ImportError:
        print("pgserver not installed: PostgreSQL skipped")
        yield None
        return
    with tempfile.TemporaryDirectory() as folder:
        server = pgserver.get_server(folder, cleanup_mode="stop")
        server.psql("CREATE DATABASE qp_bench;")
        yield server.get_uri("qp_bench")
        server.cleanup()


def copy_vectors(sqlite_dir: Path, index: Index) -> None:
    """Give the PostgreSQL index the SQLite run's vectors (same model, same keys; a
    key's blob holds one vector per passage of its chunk)."""
    db = sqlite3.connect(sqlite_dir / DB_FILENAME)
    rows = db.execute("SELECT key, vector FROM embeddings").fetchall()
    db.close()
    dimensions = db_dimensions(sqlite_dir)
    if dimensions is None:
        return
    index.store.set_embedding_space(EmbeddingSpace(DEFAULT_EMBED_MODEL, dimensions))
    for start in range(0, len(rows), 1000):
        block = rows[start : start + 1000]
        vectors = np.frombuffer(b"".join(v for _, v in block), dtype="<f4")
        parts = [len(v) // (4 * dimensions) for _, v in block]
        index.store.add_embeddings(
            [key for key, _ in block], vectors.reshape(-1, dimensions), parts
        )


def db_dimensions(sqlite_dir: Path) -> int | None:
    """The dimension the SQLite index at `sqlite_dir` records for its vectors."""
    with Index.open(sqlite_dir) as index:
        space = index.store.embedding_space()
    return space.dimensions if space else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=0, help="Use the first N test queries.")
    parser.add_argument("--rerank-model", help="Local cross-encoder directory.")
    parser.add_argument("--postgres", default="auto", help="URL, 'auto' (pgserver) or 'none'.")
    add_json_option(parser)
    parser.add_argument(
        "--postgres-only",
        action="store_true",
        help="Skip the raw-encode comparison and the SQLite queries (the SQLite index is "
        "still built: its vectors are copied to PostgreSQL).",
    )
    args = parser.parse_args()
    out = Figures("retrieval")
    console = Console(stderr=True)
    queries = scifact.queries()
    qrels = scifact.test_qrels()
    if args.queries:
        qrels = dict(list(qrels.items())[: args.queries])
    with tempfile.TemporaryDirectory() as tmp:
        folder = scifact.write_folder(Path(tmp))
        sqlite_dir = Path(tmp) / "sqlite"
        with Index.open(sqlite_dir, create=True) as index:
            started = time.perf_counter()
            results = index.ingest([folder], embed=False)
            parse_seconds = time.perf_counter() - started
            texts, ours = embed_with_progress(index, console)
            stats = index.store.stats()
        print(
            f"SciFact ingest: {len(results):,} files, {stats.chunks:,} chunks in "
            f"{parse_seconds:.1f} s, then {stats.embedded:,} vectors"
        )
        if not args.postgres_only:
            raw = raw_encode_rate(texts)
            print(
                f"  embeddings/s: quoteproof ingest {ours:.1f} · raw encode {raw:.1f} · "
                f"ratio {ours / raw:.2f} (target >= {EMBED_TARGET:.2f})"
            )
            out.add(
                "embeddings/s, quoteproof ingest",
                ours,
                "embeddings/s",
                "raw sentence-transformers encode",
                raw,
            )
            out.target(
                f"embeddings/s >= {EMBED_TARGET:.2f} x raw encode", ours >= EMBED_TARGET * raw
            )
        print(f"\n{len(qrels)} test queries; latency in ms")
        print(f"  {'retriever':18} {'store':10} {'nDCG@10':>8} {'recall@100':>10} {'p50':>8} "
              f"{'p95':>8}")  # fmt: skip
        rows = [evaluate_bm25s(queries, qrels)]
        if not args.postgres_only:
            rows += evaluate_index(sqlite_dir, "sqlite", queries, qrels, args.rerank_model)
        with postgres(args.postgres) as url:
            if url is not None:
                with Index.open(url, create=True) as index:
                    index.ingest([folder], embed=False)
                    copy_vectors(sqlite_dir, index)
                rows += evaluate_index(url, "postgres", queries, qrels, args.rerank_model)
    add_rows(out, rows)
    verdict(rows, out)
    out.write(args.json)


def add_rows(out: Figures, rows: list[Row]) -> None:
    """Per retriever and store: query p50/p95, nDCG@10 and recall@100 next to bm25s
    (the first row, store `memory`)."""
    reference, *others = rows
    ref_name = reference.name.replace(" (reference)", "")
    for row in others:
        who = f"{row.name.removeprefix('quoteproof ')} ({row.store})"
        out.add(f"query p50 ms, {who}", row.p50, "ms", f"{ref_name} p50", reference.p50)
        out.add(f"query p95 ms, {who}", row.p95, "ms", f"{ref_name} p95", reference.p95)
        out.add(f"nDCG@10, {who}", row.ndcg, "score", f"{ref_name} nDCG@10", reference.ndcg)
        out.add(
            f"recall@100, {who}", row.recall, "score", f"{ref_name} recall@100", reference.recall
        )


def verdict(rows: list[Row], out: Figures) -> None:
    """Per store: hybrid nDCG@10 at least 0.70 and above both its parts; printed, and
    kept in `out` as a note and a target."""
    for store in dict.fromkeys(r.store for r in rows if r.store != "memory"):
        by_name = {r.name: r.ndcg for r in rows if r.store == store}
        hybrid = by_name["quoteproof hybrid"]
        parts = max(by_name["quoteproof bm25"], by_name["quoteproof dense"])
        ok = hybrid >= 0.70 and hybrid > parts
        line = (
            f"{store}: hybrid nDCG@10 {hybrid:.3f} vs best part {parts:.3f}: "
            f"{'PASS' if ok else 'FAIL'} (target >= 0.70 and above both parts)"
        )
        print(line)
        out.note(line)
        out.target(f"{store}: hybrid nDCG@10 >= 0.70 and above both parts", ok)


if __name__ == "__main__":
    main()
