"""Ingest speed with embeddings: `quoteproof ingest` of the benchmark PDFs in pages/s,
with vectors and without, against the target of 30 pages/s with vectors.

Files: the PDFs of ingest.py (251 pages). Each of `--rounds` rounds runs, in fresh
processes and fresh indexes (the exported ONNX model already cached, so no export
is timed; model loading is):

- `quoteproof ingest FILES --no-embed`: parse + chunk + index;
- `quoteproof ingest FILES`: the same, then every chunk's vector (ONNX Runtime);

and in this process, over the chunk texts of that index, alternating: quoteproof's
`Embedder.embed` next to raw sentence-transformers `encode` (same batch size).
and, one after the other, the embedding of those chunks as ingest does it now
(every word read: passages through the int8 copy of the model) and as it did before
passages (one float32 vector per chunk, its tail past the model's limit unread):
each added to the `--no-embed` time, the pages/s of ingest with vectors either way.
Medians of the rounds are reported, with the load average before and after.

The chunks' embedding inputs are counted in the model's tokens: how many are over
its limit (each is embedded as several passages), and how many of the vectors'
texts are (none should be: a tail past the limit would be unread). The ceiling: the
FLOPs of embedding the chunks (their token counts under the model's token limit,
the transformer's matrix products and attention), divided by
this machine's float32 matrix-product speed (numpy, a layer-sized product, best of
several), plus the parse time: the most pages/s a float32 model with torch's
vectors can give here, whatever runs it.

Run: .venv/bin/python benchmarks/ingest_speed.py [--rounds 3] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from figures import Figures, add_json_option
from ingest import pdf_files
from quoteproof import Index
from quoteproof.retrieval.embed_index import model_limit, passages
from quoteproof.retrieval.embedder import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_EMBED_MODEL,
    Embedder,
    load_sentence_model,
    resolve_model,
)
from quoteproof.retrieval.onnx_model import max_seq_length

TARGET = 30.0
"""Pages/s of `quoteproof ingest` with vectors asked for by issue 17."""
SAME_SPEED = 0.9
"""Ingest with every word read (passages) against one vector per chunk: within 10%."""


def cli_ingest(files: list[Path], embed: bool) -> tuple[float, int]:
    """Run `quoteproof ingest FILES` in a fresh process into a fresh index; return
    its wall seconds and the chunks stored."""
    with tempfile.TemporaryDirectory() as folder:
        index = Path(folder) / "index"
        command = [sys.executable, "-m", "quoteproof", "ingest", *map(str, files)]
        command += ["--index", str(index), "--embed" if embed else "--no-embed"]
        started = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        seconds = time.perf_counter() - started
        with Index.open(index) as opened:
            chunks = opened.store.stats().chunks
    return seconds, chunks


def chunk_texts(files: list[Path]) -> tuple[list[str], list[str], int]:
    """The embedding inputs of the files' chunks (an index ingested without
    vectors), the texts embedded for them (`passages`: one per chunk the model
    reads whole, more for a longer one) and the pages."""
    with tempfile.TemporaryDirectory() as folder, Index.open(folder, create=True) as index:
        results = index.ingest_discovered(files, after=False)
        pending = index.store.pending_embeddings()
    limit = model_limit(DEFAULT_EMBED_MODEL)
    embedded = [text for item in pending for text in passages(item, limit)]
    return [item.text for item in pending], embedded, sum(result.pages for result in results)


def embedding_flops(texts: list[str]) -> tuple[float, list[int], int]:
    """FLOPs of the default model's transformer over `texts` (truncated as it is),
    their whole token counts (special tokens included) and the model's limit."""
    from tokenizers import Tokenizer

    source = Path(resolve_model(DEFAULT_EMBED_MODEL))
    config = json.loads((source / "config.json").read_text(encoding="utf-8"))
    tokenizer = Tokenizer.from_file(str(source / "tokenizer.json"))
    limit = max_seq_length(source)
    tokenizer.no_truncation()
    tokenizer.no_padding()  # tokenizer.json pads to 128; the model does not
    lengths = [len(encoding.ids) for encoding in tokenizer.encode_batch(texts)]
    read = [min(n, limit) for n in lengths]
    hidden, inner = config["hidden_size"], config["intermediate_size"]
    per_token = 2 * (4 * hidden * hidden + 2 * hidden * inner)  # Q, K, V, output; feed-forward
    attention = 4 * hidden * sum(n * n for n in read)  # scores and weighted sum
    return config["num_hidden_layers"] * (per_token * sum(read) + attention), lengths, limit


def matmul_flops_per_second() -> float:
    """This machine's float32 matrix-product speed: a batch of 16 x 256 tokens
    through a feed-forward-sized weight (numpy, all cores), best of 5."""
    tokens = np.random.default_rng(0).random((16 * 256, 384), dtype=np.float32)
    weight = np.random.default_rng(1).random((384, 1536), dtype=np.float32)
    tokens @ weight  # warm-up
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        tokens @ weight
        best = min(best, time.perf_counter() - started)
    return float(2 * tokens.shape[0] * weight.shape[0] * weight.shape[1] / best)


def encode_rates(texts: list[str]) -> tuple[float, float]:
    """Texts/s of `Embedder.embed` and of raw sentence-transformers `encode` over
    `texts`, one alternating round (both warmed up first)."""
    embedder = Embedder()
    model = load_sentence_model(
        "SentenceTransformer", DEFAULT_EMBED_MODEL, resolve_model(DEFAULT_EMBED_MODEL)
    )
    embedder.embed(texts[:DEFAULT_BATCH_SIZE])
    model.encode(texts[:DEFAULT_BATCH_SIZE], batch_size=DEFAULT_BATCH_SIZE)
    started = time.perf_counter()
    embedder.embed(texts)
    ours = len(texts) / (time.perf_counter() - started)
    started = time.perf_counter()
    model.encode(texts, batch_size=DEFAULT_BATCH_SIZE, normalize_embeddings=True)
    return ours, len(texts) / (time.perf_counter() - started)


def embedding_seconds(inputs: list[str], texts: list[str]) -> tuple[float, float]:
    """Seconds to embed the index's passages as ingest does now (`texts`, through
    `Embedder.embed_passages`: the int8 copy on ONNX Runtime) and as it did before
    passages (`inputs`, one float32 vector per chunk, truncated at the model's
    limit, through `Embedder.embed`), one after the other in this process."""
    embedder = Embedder()
    embedder.embed_passages(texts[:DEFAULT_BATCH_SIZE])  # makes and loads the int8 copy
    started = time.perf_counter()
    embedder.embed_passages(texts)
    now = time.perf_counter() - started
    started = time.perf_counter()
    embedder.embed(inputs)
    return now, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="Rounds (medians are kept).")
    parser.add_argument(
        "--encode-texts", type=int, default=160, help="Chunk texts per encode round."
    )
    add_json_option(parser)
    args = parser.parse_args()
    files = pdf_files()
    load_before = os.getloadavg()[0]
    Embedder().embed(["warm-up"])  # exports and caches the ONNX graph when it is not yet
    inputs, texts, pages = chunk_texts(files)
    sample = texts[:: max(1, len(texts) // args.encode_texts)][: args.encode_texts]
    plain, embedded, ours, raw, now, before = [], [], [], [], [], []
    for _ in range(args.rounds):
        plain.append(cli_ingest(files, embed=False)[0])
        embedded.append(cli_ingest(files, embed=True)[0])
        rates = encode_rates(sample)
        ours.append(rates[0])
        raw.append(rates[1])
        seconds = embedding_seconds(inputs, texts)
        now.append(seconds[0])
        before.append(seconds[1])
    load_after = os.getloadavg()[0]
    flops, lengths, limit = embedding_flops(texts)
    speed = matmul_flops_per_second()
    with_vectors, without = pages / statistics.median(embedded), pages / statistics.median(plain)
    ceiling = pages / (statistics.median(plain) + flops / speed)
    over = sum(n > limit for n in lengths)
    whole = embedding_flops(inputs)[1]
    chunks_over = sum(n > limit for n in whole)
    print(f"{len(files)} PDFs, {pages} pages, {len(inputs)} chunks; medians of {args.rounds} "
          f"rounds; load average {load_before:.1f} before, {load_after:.1f} after")  # fmt: skip
    print(f"quoteproof ingest, with vectors:   {with_vectors:6.1f} pages/s "
          f"(target {TARGET:g}: {'met' if with_vectors >= TARGET else 'missed'})")  # fmt: skip
    print(f"quoteproof ingest, --no-embed:     {without:6.1f} pages/s")
    print(f"texts/s over {len(sample)} texts:   Embedder.embed {statistics.median(ours):.1f}, "
          f"raw sentence-transformers encode {statistics.median(raw):.1f}")  # fmt: skip
    print(f"chunks: {chunks_over} of {len(whole)} longer than the model's limit of {limit} "
          f"tokens, embedded as {len(texts)} vectors, {over} of them over the limit")  # fmt: skip
    print(f"vector tokens: mean {statistics.mean(lengths):.0f}, {sum(lengths):,} in all; "
          f"{flops / len(texts) / 1e9:.2f} GFLOP per vector, "
          f"{flops / 1e12:.2f} TFLOP in all")  # fmt: skip
    print(f"float32 matrix products here: {speed / 1e9:.0f} GFLOP/s -> ceiling "
          f"{ceiling:.1f} pages/s with vectors (parse + FLOPs at that speed)")  # fmt: skip
    parse = statistics.median(plain)
    passages_rate = pages / (parse + statistics.median(now))
    chunks_rate = pages / (parse + statistics.median(before))
    ratio = passages_rate / chunks_rate
    print(f"embedding, same process: passages (int8) {statistics.median(now):.1f} s for "
          f"{len(texts)} vectors; one float32 vector per chunk (before passages) "
          f"{statistics.median(before):.1f} s for {len(inputs)}")  # fmt: skip
    print(f"ingest with vectors as --no-embed + embedding: passages {passages_rate:.1f} "
          f"pages/s, one vector per chunk {chunks_rate:.1f} pages/s: {ratio:.2f}x "
          f"(target >= {SAME_SPEED:g}: {'met' if ratio >= SAME_SPEED else 'missed'})")  # fmt: skip
    out = Figures("ingest_speed")
    out.add("pages/s, ingest with vectors (--no-embed + embedding), passages int8",
            passages_rate, "pages/s", "one float32 vector per chunk", chunks_rate)  # fmt: skip
    out.target(f"every word read, at >= {SAME_SPEED:g}x the speed of one vector per chunk",
               ratio >= SAME_SPEED)  # fmt: skip
    out.add("pages/s, ingest with vectors", with_vectors, "pages/s", "ingest --no-embed", without)
    out.add("chunks/s, Embedder.embed", statistics.median(ours), "chunks/s",
            "raw sentence-transformers encode", statistics.median(raw))  # fmt: skip
    out.add("% of vectors over the model's token limit", 100 * over / len(lengths), "%",
            "% of chunks over it", 100 * chunks_over / len(whole))  # fmt: skip
    out.target("no vector over the model's token limit", over == 0)
    out.add("pages/s, ingest with vectors, vs ceiling", with_vectors, "pages/s",
            "ceiling at this machine's float32 matmul speed", ceiling)  # fmt: skip
    met = with_vectors >= TARGET
    out.note(f"ingest with vectors {with_vectors:.1f} pages/s, target {TARGET:g}: "
             f"{'PASS' if met else 'FAIL'} (float32 ceiling here {ceiling:.1f} pages/s; load "
             f"average {load_before:.1f} before, {load_after:.1f} after)")  # fmt: skip
    out.target(f"ingest with vectors >= {TARGET:g} pages/s", met)
    out.write(args.json)
    if not met:
        sys.exit(1)


if __name__ == "__main__":
    main()
