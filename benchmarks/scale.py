"""Scale: indexes of 10k, 100k (and, by option, 1M) chunks on SQLite and PostgreSQL:
ingest rate, size on disk, search latency, recall against exact search, and the
time and peak memory of a cold `ask`, with the growth from one size to the next.

    python benchmarks/scale.py [--sizes 10000,100000] [--stores sqlite,postgres]
                               [--postgres auto|URL|none] [--queries 50] [--json FILE]
                               [--keep FOLDER] [--grow-only] [--bulk]

Text: chunks of 60-160 words drawn from the unigram distribution of the SciFact
corpus (its ~30k words and their frequencies), 20 chunks per document, so term
statistics (Zipf frequencies, document frequencies, lengths) follow real text.
Vectors: there is no time to embed a million chunks on two cores, so vectors are
seeded random unit vectors (384 dimensions) clustered as real embeddings are: each
document has one of 1,000 topic directions, each chunk's vector is its topic's plus
noise (cosine ~0.6 within a topic, ~0 across), and a question's vector is its source
chunk's plus noise (cosine ~0.7). Unclustered random vectors, whose nearest
neighbours are barely nearer than the rest, are the worst case of every HNSW index
and no model makes them. The index records them as the default model's vectors, so
`ask` embeds its question with the real model and runs hybrid search as users do.

The index grows in place: each size adds documents to the previous one. Ingest
rate is chunks stored per second through the store (documents, BM25 indexes,
vectors and the vector index upkeep; parsing and embedding excluded). Search:
`--queries` questions of 2-5 words taken from random chunks (IDF-weighted), timed
in-process after one warm-up: BM25 top 10, dense top 10, hybrid (BM25 and dense
at depth 100, fused by RRF, as `ask` does). Recall@10 of dense search against exact
cosine search over the same vectors (numpy); on PostgreSQL also the overlap@10 of
bounded BM25 with the full scan. Cold `ask` (extractive, no LLM): one process per
run after a warm-up run; its wall time and peak RSS (GNU time), hybrid and BM25.
`serve`: a real `quoteproof serve --no-auth` process over the index answers
`SERVE_ASKS` questions through `POST /v1/ask`; its peak RSS is the high-water mark
(VmHWM in /proc) of its process tree, read before it is stopped. When it does not
come up (its health check is waited for up to `HEALTH_WAIT_S` a try and
`SERVE_START_S` in all) or fails an ask, the size's row keeps its other figures and
shows the serve figure as failed, with the reason in a note.
Synthetic words are drawn by a search of the cumulative word distribution
(`TextModel.chunk`): a million chunks' words in ~20 s here, where `rng.choice` with
the frequencies took ~4 minutes.
A million chunks take hours to store on two cores, so an index can be grown in
steps: `--keep FOLDER` keeps it (SQLite's folder, and with `--postgres auto` the
pgserver's data) and a later run with the same folder grows on from what it holds
(the seeded generator draws the stored chunks again, writing nothing, and stores
any vectors a stopped run left out); `--grow-only` grows to the largest size and
measures nothing; sizes the kept index has passed are skipped, and a size it holds
is measured with its ingest rate shown as `kept`. `--bulk` (PostgreSQL) grows
without the HNSW index and builds it before each measurement, as pgvector advises
for bulk loads; the build's seconds are printed apart and ingest/s then leaves the
index's upkeep out. Questions come from a generator of their own, so a grown
index is the same whatever was measured on the way.
PostgreSQL: `--postgres URL`, or `auto` (a throwaway pgserver). Exit status 1 when
a target checked at the sizes run is missed or a serve measurement failed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np

from figures import Figures, add_json_option
from process_memory import tree_memory_kb
from quoteproof.model import sha256_text
from quoteproof.retrieval.embedder import DEFAULT_EMBED_MODEL
from quoteproof.retrieval.fusion import reciprocal_rank_fusion
from quoteproof.store.base import NewChunk, NewDocument, Store
from quoteproof.store.open import open_store
from quoteproof.store.postgres_schema import embedding_ddl
from quoteproof.store.vectors import EmbeddingSpace, embed_key
from scifact import corpus

DIMENSIONS = 384
CHUNKS_PER_DOC = 20
BLOCK_DOCS = 25  # documents stored before their vectors, as ingest embeds in blocks
DEPTH = 100  # each list's depth in hybrid search (quoteproof.defaults.DEFAULT_DEPTH)
TOP = 10
TARGET_RSS_MB = 1024
TARGET_HYBRID_P95_MS = {"postgres": 250.0, "sqlite": 500.0}  # at 1M chunks
TARGET_GROWTH = 3.0  # search latency, 100k -> 1M
TOPICS = 1000
BULK_BUILD_MEMORY = "4GB"  # maintenance_work_mem of a --bulk HNSW build: 1M vectors fit
SERVE_ASKS = 5
SERVE_START_S = 180  # for `serve` to answer its health check
HEALTH_WAIT_S = 30  # for one health check's answer
CHUNK_NOISE, QUESTION_NOISE = 0.8, 1.0
_WORD = re.compile(r"[a-z][a-z0-9-]+")


class TextModel:
    """SciFact's words with their frequencies and IDFs, and a fixed random vector
    per word; makes chunks, questions and their vectors from a seeded generator."""

    def __init__(self, seed: int = 29) -> None:
        counts: Counter[str] = Counter()
        holding: Counter[str] = Counter()
        abstracts = corpus()
        for title, text in abstracts.values():
            words = _WORD.findall(f"{title} {text}".lower())
            counts.update(words)
            holding.update(set(words))
        self.words = np.array(sorted(w for w, n in counts.items() if n >= 2))
        frequency = np.array([counts[w] for w in self.words], dtype=np.float64)
        self.p = frequency / frequency.sum()
        self.cumulative = np.cumsum(self.p)
        self.idf = np.log(len(abstracts) / np.array([holding[w] for w in self.words])).astype(
            np.float32
        )
        self.rng = np.random.default_rng(seed)
        self.asking = np.random.default_rng(seed + 1)
        """The questions' own generator: the corpus drawn from `rng` is the same
        whatever was asked on the way, so a kept index can be grown further."""
        self.topics = np.stack([self.noisy(np.zeros(DIMENSIONS), 1.0) for _ in range(TOPICS)])

    def chunk(self) -> np.ndarray:
        """The word numbers of a new chunk, drawn by the words' frequencies: a search
        of the cumulative distribution, as `rng.choice(p=...)` would draw them
        without redoing its sum and checks of 30k frequencies for every chunk."""
        draws = self.rng.random(int(self.rng.integers(60, 161))) * self.cumulative[-1]
        return np.searchsorted(self.cumulative, draws, side="right")

    def question(self, chunk: np.ndarray) -> np.ndarray:
        """2-5 distinct words of `chunk`, rarer words likelier."""
        unique = np.unique(chunk)
        weights = self.idf[unique] + 1e-3
        size = min(len(unique), int(self.asking.integers(2, 6)))
        return self.asking.choice(unique, size=size, replace=False, p=weights / weights.sum())

    def noisy(
        self, vector: np.ndarray, size: float, rng: np.random.Generator | None = None
    ) -> np.ndarray:
        """`vector` plus random noise of length about `size` (drawn from `rng`, the
        corpus generator when None), as a float32 unit vector."""
        draw = (rng or self.rng).standard_normal(DIMENSIONS)
        moved = vector + draw * size / np.sqrt(DIMENSIONS)
        return (moved / np.linalg.norm(moved)).astype(np.float32)

    def text(self, words: np.ndarray) -> str:
        return " ".join(self.words[words])


@dataclass(frozen=True)
class Question:
    """A question's text and its vector."""

    text: str
    vector: np.ndarray


@dataclass
class Row:
    """The figures of one store at one size."""

    store: str
    chunks: int
    ingest_per_s: float | None
    """None where a kept index already held the chunks (`--keep`)."""
    disk_mb: float
    bm25_p50: float
    bm25_p95: float
    dense_p50: float
    dense_p95: float
    hybrid_p50: float
    hybrid_p95: float
    dense_recall: float
    dense_recall_depth: float
    bm25_overlap: float | None
    ask_s: float
    ask_rss_mb: float
    ask_bm25_rss_mb: float
    serve_rss_mb: float | None
    serve_error: str | None = None
    """Why `serve_rss_mb` is None: the server did not come up or answer."""


class Growing:
    """One index grown to each size in turn, with the chunks and vectors it holds."""

    def __init__(self, name: str, location: str, model: TextModel, bulk: bool = False) -> None:
        self.name, self.location, self.model = name, location, model
        self.bulk = bulk and name == "postgres"
        self.store: Store = open_store(location, create=True)
        self.store.set_embedding_space(EmbeddingSpace(DEFAULT_EMBED_MODEL, DIMENSIONS))
        self.chunks: list[np.ndarray] = []
        self.vectors: list[np.ndarray] = []
        self._replay(self.store.count_documents())

    def grow(self, size: int) -> float:
        """Add documents until the index holds `size` chunks; chunks stored per second.
        With `bulk`, PostgreSQL's vector index is dropped first (`build_vector_index`
        builds it again)."""
        if self.bulk:
            self._sql("DROP INDEX IF EXISTS embeddings_hnsw")
        started, added = time.perf_counter(), 0
        while len(self.chunks) < size:
            keys, vectors = [], []
            for _ in range(BLOCK_DOCS):
                if len(self.chunks) >= size:
                    break
                new, doc_keys, doc_vectors = self._next_document()
                self.store.add_document(new)
                keys += doc_keys
                vectors += doc_vectors
                added += len(doc_keys)
            self.store.add_embeddings(keys, np.stack(vectors))
        return added / (time.perf_counter() - started)

    def build_vector_index(self) -> float | None:
        """With `bulk`: build PostgreSQL's HNSW index over every vector, as the store
        makes it, and return the seconds it took (None without `bulk`, or when a
        kept index has it already)."""
        if not self.bulk or self._sql(
            "SELECT 1 FROM pg_indexes WHERE indexname = 'embeddings_hnsw'"
        ):
            return None
        started = time.perf_counter()
        self._sql(f"SET maintenance_work_mem = '{BULK_BUILD_MEMORY}'")
        self._sql(embedding_ddl(DIMENSIONS)[1])
        return time.perf_counter() - started

    def _sql(self, statement: str) -> list[Any]:
        """Run one statement on the PostgreSQL store's own connection, commit it, and
        return the rows it gave."""
        connection = self.store._db  # type: ignore[attr-defined]
        cursor = connection.execute(statement)
        rows = cursor.fetchall() if cursor.description else []
        connection.commit()
        return list(rows)

    def _next_document(self) -> tuple[NewDocument, list[str], list[np.ndarray]]:
        """The next document of the corpus with its chunks' vector keys and vectors,
        its chunks' words and vectors kept (nothing is written)."""
        new, words = self._document(len(self.chunks) // CHUNKS_PER_DOC)
        topic = self.model.topics[self.model.rng.integers(TOPICS)]
        keys, vectors = [], []
        for chunk in new.chunks:
            assert isinstance(chunk, NewChunk)
            keys.append(embed_key(new.title, chunk.section, new.text[chunk.start : chunk.end]))
            vectors.append(self.model.noisy(topic, CHUNK_NOISE))
        self.chunks.extend(words)
        self.vectors.extend(vectors)
        return new, keys, vectors

    def _replay(self, documents: int) -> None:
        """Draw again the `documents` documents a kept index holds (the generator is
        seeded, so they are the ones stored), and store the vectors of those a
        stopped run left without them."""
        if not documents:
            return
        print(f"  {self.name}: {documents:,} documents kept, drawn again ...", file=sys.stderr)
        pending = {p.key for p in self.store.pending_embeddings()}
        missing: dict[str, np.ndarray] = {}
        for _ in range(documents):
            _, keys, vectors = self._next_document()
            missing.update((k, v) for k, v in zip(keys, vectors, strict=True) if k in pending)
        if missing:
            self.store.add_embeddings(list(missing), np.stack(list(missing.values())))

    def _document(self, number: int) -> tuple[NewDocument, list[np.ndarray]]:
        words = [self.model.chunk() for _ in range(CHUNKS_PER_DOC)]
        texts = [self.model.text(w) for w in words]
        text = "\n\n".join(texts)
        chunks, offset = [], 0
        for ordinal, chunk_text in enumerate(texts, start=1):
            chunks.append(NewChunk(offset, offset + len(chunk_text), ("Part",), f"¶{ordinal}"))
            offset += len(chunk_text) + 2
        title = f"Document {number}"
        new = NewDocument(
            f"/scale/{number}.txt", title, "text", text, sha256_text(text), tuple(chunks)
        )
        return new, words

    def question(self, number: int) -> Question:
        """A question about chunk `number`: some of its words, a vector near its own."""
        words = self.model.question(self.chunks[number])
        vector = self.model.noisy(self.vectors[number], QUESTION_NOISE, self.model.asking)
        return Question(self.model.text(words), vector)

    def disk_mb(self) -> float:
        if self.name == "sqlite":
            return sum(f.stat().st_size for f in Path(self.location).iterdir()) / 2**20
        row = self.store._db.execute("SELECT pg_database_size(current_database()) AS n").fetchone()  # type: ignore[attr-defined]
        return float(row["n"]) / 2**20


def percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def timed(call: Callable[[], object], runs: Sequence[object]) -> list[float]:
    """Milliseconds of each run of `call` (the first, a warm-up, discarded)."""
    times = []
    for number, _ in enumerate([None, *runs]):
        started = time.perf_counter()
        call()
        if number:
            times.append((time.perf_counter() - started) * 1000)
    return times


def measure_search(index: Growing, queries: list[Question]) -> dict[str, list[float]]:
    store = index.store
    texts = [q.text for q in queries]
    vectors = [q.vector for q in queries]
    out: dict[str, list[float]] = {"bm25": [], "dense": [], "hybrid": []}
    for text, vector in zip(texts, vectors, strict=True):
        out["bm25"] += timed(lambda t=text: store.search_bm25(t, TOP), [0])
        out["dense"] += timed(lambda v=vector: store.search_dense(v, TOP), [0])

        def hybrid(t: str = text, v: np.ndarray = vector) -> object:
            lists = {"bm25": store.search_bm25(t, DEPTH), "dense": store.search_dense(v, DEPTH)}
            return reciprocal_rank_fusion(lists, limit=TOP)

        out["hybrid"] += timed(hybrid, [0])
    return out


def dense_recall(index: Growing, queries: list[Question], depth: int = TOP) -> float:
    """Recall@10 of the store's dense search (the top 10 of a search for `depth`
    chunks, as hybrid search asks for 100) against exact cosine search."""
    matrix = np.stack(index.vectors)
    texts = [index.model.text(w) for w in index.chunks]
    found = 0
    for query in queries:
        vector = query.vector
        exact = {texts[i] for i in np.argsort(-(matrix @ vector), kind="stable")[:TOP]}
        found += len(exact & {h.chunk.text for h in index.store.search_dense(vector, depth)[:TOP]})
    return found / (TOP * len(queries))


def bm25_overlap(index: Growing, queries: list[Question]) -> float | None:
    """On PostgreSQL with bounded BM25 in use: overlap@10 of its hits with the full scan's."""
    store = index.store
    bounded_from = getattr(store, "bm25_bounded_from", None)
    if bounded_from is None or len(index.chunks) < bounded_from:
        return None
    same = 0
    for query in queries:
        text = query.text
        bounded = {h.chunk.ref for h in store.search_bm25(text, TOP)}
        store.bm25_bounded_from = 10**12  # type: ignore[attr-defined]
        full = {h.chunk.ref for h in store.search_bm25(text, TOP)}
        store.bm25_bounded_from = bounded_from  # type: ignore[attr-defined]
        same += len(bounded & full)
    return same / (TOP * len(queries))


def cold_ask(location: str, question: str, retriever: str) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one `quoteproof ask` process, after a warm-up.

    The peak is GNU time's (`/usr/bin/time -f %M`): a child forked from this process
    would report this process's own memory, counted at its exec, as its peak."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    command = ["/usr/bin/time", "-f", "peak %M", sys.executable, "-m", "quoteproof", "ask"]
    command += [question, "--index", location, "--retriever", retriever]
    result = (0.0, 0.0)
    for _ in range(2):
        started = time.perf_counter()
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        elapsed = time.perf_counter() - started
        lines = done.stderr.decode(errors="replace").strip().splitlines()
        if done.returncode not in (0, 3) or not lines[-1:] or not lines[-1].startswith("peak "):
            raise RuntimeError(f"ask exited {done.returncode}: {lines[-2:]}")
        result = (elapsed, int(lines[-1].split()[1]) / 1024)
    return result


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def serve_rss(location: str, questions: Sequence[str]) -> float:
    """Peak RSS (MB) of a `quoteproof serve --no-auth` process over `location` that
    has answered `questions` (`POST /v1/ask`, one after another, each answered 200).

    RuntimeError when the server does not start within `SERVE_START_S` or an ask fails."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "quoteproof", "serve", "--index", location, "--no-auth",
               "--host", "127.0.0.1", "--port", str(port)]  # fmt: skip
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    with tempfile.TemporaryFile() as log:
        server = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
        try:
            _wait_healthy(url, server)
            for question in questions:
                body = json.dumps({"question": question}).encode()
                request = urllib.request.Request(
                    f"{url}/v1/ask", body, {"Content-Type": "application/json"}
                )
                with urllib.request.urlopen(request, timeout=300) as response:
                    response.read()
            return tree_memory_kb(server.pid, "VmHWM") / 1024
        except Exception as exc:
            log.seek(0)
            tail = log.read().decode(errors="replace").splitlines()[-5:]
            raise RuntimeError(f"serve failed: {exc}; {tail}") from exc
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, 9)
                server.wait()


def serve_figure(location: str, questions: Sequence[str]) -> tuple[float | None, str | None]:
    """`serve_rss` and None, or None and why it failed (the size's other figures
    stand without it)."""
    try:
        return serve_rss(location, questions), None
    except RuntimeError as exc:
        print(f"  {exc}", file=sys.stderr, flush=True)
        return None, str(exc)


def _wait_healthy(url: str, server: subprocess.Popen[bytes]) -> None:
    """Return once `GET /v1/health` answers 200, each check waiting up to
    `HEALTH_WAIT_S` (a server opening a large index under load answers slowly);
    RuntimeError when `server` exits or `SERVE_START_S` pass first."""
    deadline = time.monotonic() + SERVE_START_S
    while (left := deadline - time.monotonic()) > 0 and server.poll() is None:
        try:
            wait = min(HEALTH_WAIT_S, left)
            with urllib.request.urlopen(f"{url}/v1/health", timeout=wait) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.3)
    raise RuntimeError(f"the server at {url} did not start")


def measure(index: Growing, ingest_rate: float | None, queries: list[Question]) -> Row:
    print(f"  {index.name} {len(index.chunks):,}: searching ...", file=sys.stderr, flush=True)
    times = measure_search(index, queries)
    recall = dense_recall(index, queries[:20])
    recall_depth = dense_recall(index, queries[:20], DEPTH)
    overlap = bm25_overlap(index, queries[:10])
    question = queries[0].text
    ask_s, ask_rss = cold_ask(index.location, question, "hybrid")
    _, bm25_rss = cold_ask(index.location, question, "bm25")
    serve_mb, serve_error = serve_figure(index.location, [q.text for q in queries[:SERVE_ASKS]])
    p = {k: (percentile(v, 50), percentile(v, 95)) for k, v in times.items()}
    return Row(
        index.name, len(index.chunks), ingest_rate, index.disk_mb(),
        *p["bm25"], *p["dense"], *p["hybrid"], recall, recall_depth, overlap,
        ask_s, ask_rss, bm25_rss, serve_mb, serve_error,
    )  # fmt: skip


HEADER = (
    f"{'store':9} {'chunks':>9} {'ingest/s':>8} {'disk MB':>8} {'bm25 p50/p95':>13} "
    f"{'dense p50/p95':>13} {'hybrid p50/p95':>14} {'recall':>6} {'@d100':>6} {'bm25 ov':>7} "
    f"{'ask s':>6} {'ask MB':>6} {'bm25 MB':>7} {'serve MB':>8}"
)


def line(row: Row) -> str:
    overlap = f"{row.bm25_overlap:7.2f}" if row.bm25_overlap is not None else f"{'exact':>7}"
    return (
        f"{row.store:9} {row.chunks:9,} "
        + (f"{row.ingest_per_s:8.0f}" if row.ingest_per_s is not None else f"{'kept':>8}")
        + f" {row.disk_mb:8.0f} "
        f"{row.bm25_p50:6.1f}/{row.bm25_p95:6.1f} {row.dense_p50:6.1f}/{row.dense_p95:6.1f} "
        f"{row.hybrid_p50:7.1f}/{row.hybrid_p95:6.1f} {row.dense_recall:6.3f} "
        f"{row.dense_recall_depth:6.3f} {overlap} "
        f"{row.ask_s:6.2f} {row.ask_rss_mb:6.0f} {row.ask_bm25_rss_mb:7.0f} "
        + (f"{row.serve_rss_mb:8.0f}" if row.serve_rss_mb is not None else f"{'failed':>8}")
    )


def growth_lines(rows: list[Row]) -> list[str]:
    lines = []
    for before, after in pairwise(rows):
        if before.store != after.store:
            continue
        ratios = ", ".join(
            f"{name} {_ratio(getattr(after, field), getattr(before, field))}"
            for name, field in (
                ("hybrid p95", "hybrid_p95"),
                ("bm25 p95", "bm25_p95"),
                ("dense p95", "dense_p95"),
                ("ask RSS", "ask_rss_mb"),
                ("serve RSS", "serve_rss_mb"),
                ("disk", "disk_mb"),
            )
        )
        times = after.chunks / before.chunks
        lines.append(
            f"{after.store} {before.chunks:,} -> {after.chunks:,} ({times:.0f}x): {ratios}"
        )
    return lines


def _ratio(after: float | None, before: float | None) -> str:
    """`after / before` as "2.00x", "failed" where either was not measured."""
    return "failed" if after is None or before is None else f"{after / before:.2f}x"


def figures(rows: list[Row]) -> Figures:
    out = Figures("scale")
    previous: dict[str, Row] = {}
    for row in rows:
        label = f"{row.store} {row.chunks:,}"
        before = previous.get(row.store)
        out.add(f"{label}: ingest, chunks/s", row.ingest_per_s, "chunks/s")
        out.add(f"{label}: disk, MB", row.disk_mb, "MB")
        for kind in ("bm25", "dense", "hybrid"):
            value = getattr(row, f"{kind}_p95")
            reference = getattr(before, f"{kind}_p95") if before else None
            out.add(f"{label}: {kind} p95, ms", value, "ms",
                    f"{before.chunks:,} chunks" if before else "", reference)  # fmt: skip
        out.add(f"{label}: dense recall@10", row.dense_recall, "")
        out.add(f"{label}: dense recall@10, depth 100", row.dense_recall_depth, "")
        if row.bm25_overlap is not None:
            out.add(f"{label}: bounded BM25 overlap@10", row.bm25_overlap, "")
        out.add(f"{label}: cold ask, s", row.ask_s, "s")
        out.add(f"{label}: ask peak RSS, MB", row.ask_rss_mb, "MB")
        out.add(f"{label}: serve peak RSS, MB", row.serve_rss_mb, "MB")
        if row.serve_error is not None:
            out.note(f"{label}: serve failed: {row.serve_error}")
        out.target(f"{label}: ask peak RSS <= {TARGET_RSS_MB} MB", row.ask_rss_mb <= TARGET_RSS_MB)
        if row.chunks >= 1_000_000:
            goal = TARGET_HYBRID_P95_MS[row.store]
            out.target(f"{label}: hybrid p95 <= {goal:g} ms", row.hybrid_p95 <= goal)
            if before is not None and before.chunks >= 100_000:
                growth = row.hybrid_p95 / before.hybrid_p95
                out.target(
                    f"{label}: hybrid p95 growth <= {TARGET_GROWTH:g}x", growth <= TARGET_GROWTH
                )
        previous[row.store] = row
    if not any(row.chunks >= 1_000_000 for row in rows):
        out.note("1M chunks not run (--sizes ...,1000000): the 1M targets are not checked")
    out.data = [asdict(row) for row in rows]
    return out


@contextmanager
def postgres_url(option: str, keep: Path | None = None) -> Iterator[str | None]:
    """The PostgreSQL URL of `--postgres`: the URL given, a pgserver's for `auto`
    (None when pgserver is not installed), None for `none`. The pgserver's data
    lives in `keep`/postgres when given (and stays), else in a throwaway folder."""
    if option != "auto":
        yield None if option == "none" else option
        return
    with tempfile.TemporaryDirectory() as scratch:
        server = pgserver_for(keep / "postgres" if keep is not None else Path(scratch))
        try:
            yield server.get_uri() if server is not None else None
        finally:
            if server is not None:
                server.cleanup()


def pgserver_for(folder: Path) -> Any:
    """A running pgserver over the data in `folder` (made when missing), stopped
    by its `cleanup()`; None, said on stderr, when pgserver is not installed."""
    try:
        import pgserver
    except ImportError:
        print("pgserver is not installed: PostgreSQL skipped", file=sys.stderr)
        return None
    folder.mkdir(parents=True, exist_ok=True)
    return pgserver.get_server(folder, cleanup_mode="stop")


def run_store(
    name: str, location: str, sizes: list[int], args: argparse.Namespace
) -> Iterator[Row]:
    """Grow one index through `sizes` and measure it at each (`--grow-only`: grow
    to the last and measure nothing); a size a kept index has passed is skipped."""
    model = TextModel()
    index = Growing(name, location, model, bulk=args.bulk)
    try:
        for size in sizes:
            if len(index.chunks) > size:
                print(f"  {name}: {size:,} skipped, the kept index holds more", file=sys.stderr)
                continue
            rate = None
            if len(index.chunks) < size:
                print(f"  {name}: growing to {size:,} chunks ...", file=sys.stderr, flush=True)
                rate = index.grow(size)
            if args.grow_only:
                if rate is not None:
                    print(f"{name} {size:,}: grown at {rate:.0f} chunks/s", flush=True)
                continue
            built = index.build_vector_index()
            if built is not None:
                print(f"{name} {size:,}: HNSW index built in {built:.0f} s (--bulk)", flush=True)
            picks = model.asking.integers(0, len(index.chunks), size=args.queries)
            queries = [index.question(int(i)) for i in picks]
            row = measure(index, rate, queries)
            print(line(row), flush=True)
            yield row
    finally:
        index.store.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="Chunk counts, ascending.")
    parser.add_argument("--stores", default="sqlite,postgres", help="sqlite, postgres or both.")
    parser.add_argument("--postgres", default="auto", help="URL, 'auto' (pgserver) or 'none'.")
    parser.add_argument("--queries", type=int, default=50, help="Questions timed per size.")
    parser.add_argument(
        "--keep",
        type=Path,
        help="Keep the indexes in this folder (SQLite's, and with --postgres auto the "
        "pgserver's data) and grow on from what they hold in a later run.",
    )
    parser.add_argument(
        "--grow-only", action="store_true", help="Grow to the largest size; measure nothing."
    )
    parser.add_argument(
        "--bulk",
        action="store_true",
        help="PostgreSQL: grow without the HNSW index and build it before measuring, "
        "as pgvector advises for bulk loads (ingest/s then leaves its upkeep out).",
    )
    add_json_option(parser)
    args = parser.parse_args(argv)
    sizes = sorted(int(size) for size in args.sizes.split(","))
    stores = args.stores.split(",")
    rows: list[Row] = []
    print(HEADER, flush=True)
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch)
        if "sqlite" in stores:
            rows += run_store("sqlite", str(folder / "sqlite"), sizes, args)
        if "postgres" in stores:
            with postgres_url(args.postgres, args.keep) as url:
                if url is not None:
                    rows += run_store("postgres", url, sizes, args)
    print("(ms per search; recall: dense recall@10 against exact search, of a top-10 search")
    print(" and @d100 of the top 10 of a depth-100 search as hybrid makes; bm25 ov: bounded")
    print(" BM25's overlap@10 with the full scan, 'exact' where the full scan ran; ask MB:")
    print(" peak RSS of a cold `ask`, hybrid and --retriever bm25; serve MB: peak RSS of a")
    print(f" `serve` process after {SERVE_ASKS} asks)")
    for growth in growth_lines(rows):
        print(growth)
    out = figures(rows)
    for note in out.notes:
        print(note)
    out.write(args.json)
    return 0 if all(out.targets.values()) and all(row.serve_error is None for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
