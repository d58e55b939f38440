"""Embedding speed on each device and runtime here, and how far the vectors are
from the CPU's.

    python benchmarks/gpu_embed.py [--corpus PATH ... | --texts FILE] [--model NAME]
                                   [--batch-size 16] [--limit N] [--json FILE]

The files of `--corpus` (default: examples/corpus) are ingested without vectors into
a temporary index; the texts embedded are the passages `ingest` would embed
(`embed_index.passages`). Each configuration this machine can run embeds all of
them, after one warm-up batch (`--texts FILE`: a JSON list of passages instead, for a
machine without the ingest dependencies; `--model`: a model name or directory other
than the default): ONNX Runtime float32 and its int8 passage copy on the
CPU, ONNX Runtime float32 on CUDA (with onnxruntime-gpu: the `gpu` extra), torch
(sentence-transformers) on the CPU and on CUDA, and `Embedder.embed_passages` as
`ingest` calls it (device chosen automatically). For each it prints chunks/s, and
against the reference (torch on the CPU, float32: what the ONNX export is checked
against) the largest difference of any vector element and the least cosine; a
float32 configuration should stay at or above the export check's cosine
(`onnx_export.MIN_COSINE`), the int8 copy within its own (0.98).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

from figures import Figures, add_json_option
from quoteproof.retrieval.device import CUDA_PROVIDER, DEVICE_VARIABLE
from quoteproof.retrieval.embedder import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_EMBED_MODEL,
    Embedder,
    SentenceModel,
    TorchSentenceModel,
    load_onnx_passage_model,
    resolve_model,
)
from quoteproof.retrieval.onnx_export import MIN_COSINE
from quoteproof.retrieval.onnx_model import OnnxSentenceModel, cached_model_path
from quoteproof.retrieval.onnx_quantize import quantized_path
from quoteproof.retrieval.retriever import RetrievalNotice

REPO = Path(__file__).resolve().parent.parent
INT8_MIN_COSINE = 0.98
"""The least cosine the int8 passage copy is checked to (`onnx_quantize`)."""


def passage_texts(corpus: list[Path], limit: int) -> list[str]:
    """The passages `ingest` would embed for the files of `corpus` (the first
    `limit` when it is not 0). Imported here: `--texts` runs without the ingest
    dependencies."""
    from quoteproof import Index
    from quoteproof.retrieval.embed_index import model_limit, passages

    with tempfile.TemporaryDirectory() as tmp, Index.open(Path(tmp) / "i", create=True) as index:
        index.ingest(corpus, embed=False)
        pending = index.store.pending_embeddings()
    most = model_limit(DEFAULT_EMBED_MODEL)
    texts = [text for item in pending for text in passages(item, most)]
    return texts[:limit] if limit else texts


def on_device(device: str, make: Callable[[], SentenceModel]) -> SentenceModel:
    """`make()` with `DEVICE_VARIABLE` set to `device` (read when a model loads)."""
    saved = os.environ.get(DEVICE_VARIABLE)
    os.environ[DEVICE_VARIABLE] = device
    try:
        return make()
    finally:
        if saved is None:
            os.environ.pop(DEVICE_VARIABLE, None)
        else:
            os.environ[DEVICE_VARIABLE] = saved


def configurations(model: str) -> dict[str, Callable[[], SentenceModel]]:
    """Every way to embed `model` this machine offers, by name (loading is deferred)."""
    import onnxruntime as ort
    import sentence_transformers
    import torch

    source = resolve_model(model)
    folder = Path(source)
    on_device("cpu", lambda: load_onnx_passage_model(model, source))  # export
    graph = cached_model_path(folder)
    made: dict[str, Callable[[], SentenceModel]] = {
        "onnx float32, cpu": lambda: on_device("cpu", lambda: OnnxSentenceModel(graph, folder)),
        "onnx int8, cpu": lambda: on_device(
            "cpu", lambda: OnnxSentenceModel(quantized_path(graph), folder)
        ),
    }
    if CUDA_PROVIDER in ort.get_available_providers():
        made["onnx float32, cuda"] = lambda: on_device(
            "cuda", lambda: OnnxSentenceModel(graph, folder)
        )
    made["torch float32, cpu"] = lambda: TorchSentenceModel(
        sentence_transformers.SentenceTransformer(source, device="cpu")
    )
    if torch.cuda.is_available():
        made["torch float32, cuda"] = lambda: TorchSentenceModel(
            sentence_transformers.SentenceTransformer(source, device="cuda")
        )
    return made


def timed(model: SentenceModel, texts: list[str], batch_size: int) -> tuple[np.ndarray, float]:
    """The vectors of `texts` and the seconds they took, after one warm-up batch."""
    model.encode(texts[:batch_size], batch_size, None)
    started = time.perf_counter()
    vectors = model.encode(texts, batch_size, None)
    return np.asarray(vectors), time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--corpus", type=Path, nargs="*", default=[REPO / "examples" / "corpus"])
    parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE)
    parser.add_argument("--texts", type=Path, help="A JSON list of passages to embed.")
    parser.add_argument("--model", default=DEFAULT_EMBED_MODEL, help="Model name or directory.")
    parser.add_argument("--limit", type=int, default=0, help="Embed the first N passages only.")
    add_json_option(parser)
    args = parser.parse_args()
    warnings.simplefilter("ignore", RetrievalNotice)  # the index is made without vectors
    if args.texts:
        texts = json.loads(args.texts.read_text(encoding="utf-8"))[: args.limit or None]
        origin = str(args.texts)
    else:
        texts, origin = passage_texts(args.corpus, args.limit), ", ".join(map(str, args.corpus))
    print(f"{len(texts)} passages of {origin}, batch {args.batch_size}")
    out = Figures("gpu_embed")
    results: dict[str, tuple[np.ndarray, float]] = {}
    for name, make in configurations(args.model).items():
        results[name] = timed(make(), texts, args.batch_size)
    embedder = Embedder(args.model, batch_size=args.batch_size)
    name = f"Embedder.embed_passages ({embedder.device})"
    results[name] = timed(_Passages(embedder), texts, args.batch_size)
    reference, _ = results["torch float32, cpu"]
    print(f"{'configuration':<44} {'chunks/s':>9} {'max |diff|':>11} {'min cosine':>11}  within")
    for name, (vectors, seconds) in results.items():
        rate = len(texts) / seconds
        difference = float(np.max(np.abs(vectors - reference)))
        cosine = float(np.min(np.sum(vectors * reference, axis=1)))
        floor = INT8_MIN_COSINE if "int8" in name or "onnx on cpu" in name else MIN_COSINE
        within = cosine >= floor
        print(f"{name:<44} {rate:>9.1f} {difference:>11.2e} {cosine:>11.6f}  {within} (>= {floor})")
        out.add(f"chunks/s, {name}", rate, "chunks/s")
        out.add(f"max |diff| vs torch cpu, {name}", difference, "")
        out.add(f"min cosine vs torch cpu, {name}", cosine, "")
        out.target(f"{name}: cosine >= {floor}", within)
    out.write(args.json)
    return 0


class _Passages:
    """`Embedder.embed_passages` behind the `SentenceModel` interface."""

    runtime = "quoteproof"

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.device = embedder.device
        self.dimensions = embedder.dimensions

    def encode(
        self, texts: list[str], batch_size: int, on_batch: Callable[[int], None] | None
    ) -> np.ndarray:
        return np.asarray(self.embedder.embed_passages(texts, on_batch))


if __name__ == "__main__":
    sys.exit(main())
