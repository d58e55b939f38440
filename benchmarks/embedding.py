"""The embedding runtime: ONNX Runtime next to sentence-transformers (torch).

In one run, on BEIR SciFact abstracts (all of them, or `--docs N`: the judged
documents of the chosen test queries and others up to N):

- embeddings/s: quoteproof's embedding of the index's chunks (`Index.embed`, ONNX
  Runtime with the int8 copy of the model for passages) next to raw
  sentence-transformers `encode` of the same texts, same batch size (its vectors are
  the torch index's);
- the same, as the best of alternating rounds of `Embedder.embed_passages` and `encode`
  over the first `--encode-texts` chunks (fair under a changing machine load);
- query-embedder start-up: a whole Python process that embeds one query, ONNX
  Runtime (exported model already cached) next to torch;
- nDCG@10 of dense and hybrid retrieval with the ONNX vectors (int8 passages,
  float32 queries) next to the torch vectors (float32); the target is a difference
  of at most 0.005.

Run: .venv/bin/python benchmarks/embedding.py [--docs N] [--queries N] [--json FILE]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import scifact
from figures import Figures, add_json_option
from quoteproof import Index
from quoteproof.retrieval.embed_index import model_limit, passages
from quoteproof.retrieval.embedder import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_EMBED_MODEL,
    RUNTIME_VARIABLE,
    Embedder,
    load_sentence_model,
    resolve_model,
)
from quoteproof.retrieval.retriever import RetrievalSettings
from quoteproof.store.vectors import EmbeddingSpace
from retrieval import documents, measure

NDCG_TOLERANCE = 0.005
STARTUP_SCRIPT = (
    "from quoteproof.retrieval.embedder import Embedder\n"
    "print(Embedder().embed_query('What lowers the risk of stroke?').shape)\n"
)


def write_sample(root: Path, qrels: dict[str, dict[str, int]], docs: int) -> Path:
    """Write the judged documents of `qrels` and others up to `docs` in all (0: the
    whole corpus) as `ID.txt` under `root/scifact`."""
    if not docs:
        return scifact.write_folder(root)
    corpus = scifact.corpus()
    judged = {doc for relevant in qrels.values() for doc in relevant if doc in corpus}
    chosen = list(judged) + [doc for doc in corpus if doc not in judged]
    folder = root / "scifact"
    folder.mkdir()
    for doc_id in chosen[: max(docs, len(judged))]:
        title, text = corpus[doc_id]
        (folder / f"{doc_id}.txt").write_text(f"{title}\n\n{text}\n", encoding="utf-8")
    return folder


def startup_seconds(runtime: str) -> float:
    """Seconds a fresh process takes to import quoteproof's embedder, load the
    model with `runtime` and embed one query (the best of two runs)."""
    env = {**os.environ, RUNTIME_VARIABLE: runtime}
    best = float("inf")
    for _ in range(2):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", STARTUP_SCRIPT], env=env, check=True, stdout=-3)
        best = min(best, time.perf_counter() - started)
    return best


def torch_vectors_into(location: Path) -> float:
    """Give the index at `location` the vectors of raw sentence-transformers `encode`
    (model loaded and warmed up first); return its embeddings/s."""
    model = load_sentence_model(
        "SentenceTransformer", DEFAULT_EMBED_MODEL, resolve_model(DEFAULT_EMBED_MODEL)
    )
    model.encode(["warm-up"] * DEFAULT_BATCH_SIZE, batch_size=DEFAULT_BATCH_SIZE)
    with Index.open(location) as index:
        pending = index.store.pending_embeddings()
        limit = model_limit(DEFAULT_EMBED_MODEL)
        texts = [passages(item, limit) for item in pending]  # as quoteproof embeds them
        started = time.perf_counter()
        vectors = model.encode(
            [text for parts in texts for text in parts],
            batch_size=DEFAULT_BATCH_SIZE,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        rate = len(vectors) / (time.perf_counter() - started)
        index.store.set_embedding_space(EmbeddingSpace(DEFAULT_EMBED_MODEL, vectors.shape[1]))
        index.store.add_embeddings(
            [item.key for item in pending], vectors, [len(parts) for parts in texts]
        )
    return rate


def encode_rates(texts: list[str], rounds: int = 2) -> tuple[float, float]:
    """Embeddings/s of quoteproof's `Embedder.embed_passages` (what ingest runs:
    ONNX Runtime, the int8 copy) and of raw
    sentence-transformers `encode` over `texts`, same batch size, measured in
    alternating rounds (so both see the same machine load); the best of each."""
    embedder = Embedder()
    model = load_sentence_model(
        "SentenceTransformer", DEFAULT_EMBED_MODEL, resolve_model(DEFAULT_EMBED_MODEL)
    )
    best = [0.0, 0.0]
    for _ in range(rounds):
        for i, encode in enumerate(
            (
                lambda: embedder.embed_passages(texts),
                lambda: model.encode(
                    texts, batch_size=DEFAULT_BATCH_SIZE, normalize_embeddings=True
                ),
            )
        ):
            started = time.perf_counter()
            encode()
            best[i] = max(best[i], len(texts) / (time.perf_counter() - started))
    return best[0], best[1]


def ndcg(
    location: Path, runtime: str, queries: dict[str, str], qrels: dict[str, dict[str, int]]
) -> dict[str, float]:
    """nDCG@10 of dense and hybrid retrieval over the index at `location`, queries
    embedded with `runtime`."""
    os.environ[RUNTIME_VARIABLE] = runtime
    scores = {}
    for name in ("dense", "hybrid"):
        with Index.open(location, retrieval=RetrievalSettings(retriever=name)) as index:

            def search(text: str, index: Index = index) -> list[str]:
                return documents(index.search(text, top_k=120))

            scores[name] = measure(f"{name} ({runtime})", "sqlite", search, queries, qrels).ndcg
    os.environ.pop(RUNTIME_VARIABLE)
    return scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=0, help="At most N abstracts (0: all).")
    parser.add_argument("--queries", type=int, default=0, help="Use the first N test queries.")
    parser.add_argument(
        "--encode-texts", type=int, default=256, help="Texts per alternating encode round."
    )
    add_json_option(parser)
    args = parser.parse_args()
    out = Figures("embedding")
    queries, qrels = scifact.queries(), scifact.test_qrels()
    if args.queries:
        qrels = dict(list(qrels.items())[: args.queries])
    embedder = Embedder()
    print(f"runtime: {embedder.runtime} (model exported and cached before timing)")
    # on torch (no ONNX Runtime, or the export refused) every comparison below is torch
    # against torch: the run says so by missing this target
    out.target("the embedder runs on ONNX Runtime", embedder.runtime == "onnx")
    embedder.embed(["warm-up"] * DEFAULT_BATCH_SIZE)

    onnx_start, torch_start = startup_seconds("onnx"), startup_seconds("torch")
    print(f"query embedder start-up, whole process: onnx {onnx_start:.2f} s, torch "
          f"{torch_start:.2f} s")  # fmt: skip
    out.add("query embedder start-up s", onnx_start, "s", "torch (sentence-transformers)",
            torch_start)  # fmt: skip

    with tempfile.TemporaryDirectory() as tmp:
        folder = write_sample(Path(tmp), qrels, args.docs)
        onnx_dir, torch_dir = Path(tmp) / "onnx", Path(tmp) / "torch"
        with Index.open(onnx_dir, create=True) as index:
            index.ingest([folder], embed=False)
            limit = model_limit(DEFAULT_EMBED_MODEL)
            pending = index.store.pending_embeddings()
            texts = [text for item in pending for text in passages(item, limit)]
            chunks = len(texts)
        shutil.copytree(onnx_dir, torch_dir)
        with Index.open(onnx_dir) as index:
            report = index.embed()
        raw = torch_vectors_into(torch_dir)
        print(f"embeddings/s over {chunks:,} texts: quoteproof (onnx) "
              f"{report.per_second:.1f}, raw encode {raw:.1f}")  # fmt: skip
        out.add("embeddings/s, quoteproof ingest (onnx)", report.per_second, "embeddings/s",
                "raw sentence-transformers encode", raw)  # fmt: skip
        onnx_rate, torch_rate = encode_rates(texts[: args.encode_texts])
        print(f"alternating rounds over {min(chunks, args.encode_texts):,} texts: "
              f"onnx {onnx_rate:.1f}/s, raw encode {torch_rate:.1f}/s")  # fmt: skip
        out.add("embeddings/s, Embedder.embed_passages (onnx int8), alternating", onnx_rate,
                "embeddings/s",
                "raw sentence-transformers encode, alternating", torch_rate)  # fmt: skip
        out.target("embeddings/s >= raw encode (alternating rounds)", onnx_rate >= torch_rate)
        print(f"\n{len(qrels)} test queries over {chunks:,} passages; latency in ms")
        onnx_scores = ndcg(onnx_dir, "onnx", queries, qrels)
        torch_scores = ndcg(torch_dir, "torch", queries, qrels)
    for name, score in onnx_scores.items():
        out.add(f"nDCG@10, {name} (onnx)", score, "score", f"{name} (torch)", torch_scores[name])
        close = abs(score - torch_scores[name]) <= NDCG_TOLERANCE
        out.target(f"nDCG@10 {name} within {NDCG_TOLERANCE} of torch", close)
        line = f"nDCG@10 {name}: onnx {score:.4f} vs torch {torch_scores[name]:.4f}: " + (
            "PASS" if close else "FAIL"
        )
        print(line)
        out.note(line)
    out.write(args.json)
    if not all(out.targets.values()):
        sys.exit(1)


if __name__ == "__main__":
    main()
