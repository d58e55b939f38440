"""A sentence-transformers model run through ONNX Runtime (no torch at run time).

The model is exported once (`onnx_export`) to a cache file named by a digest of
the model's files, `EXPORTER_VERSION` and the onnxruntime version, under
`$XDG_CACHE_HOME/quoteproof/onnx` (or `~/.cache/quoteproof/onnx`); a refused
export is remembered there under the same key (`onnx_export.remember_refusal`).
The graph takes token ids, attention mask and token type ids and returns
mean-pooled token embeddings; texts are tokenised with `tokenizers` from the
model's tokenizer.json, truncated to its `max_seq_length` as sentence-transformers
does, and the rows are L2-normalised here. ONNX Runtime runs on CUDA when its
CUDAExecutionProvider is available (`device.onnx_providers`), otherwise on the CPU
with one thread per core.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from quoteproof.retrieval.device import CUDA_PROVIDER, onnx_providers
from quoteproof.store.vectors import Vectors

EXPORTER_VERSION = "2"
"""Part of the cache key: bump it when the exported graph changes."""
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
OUTPUT_NAME = "sentence_embedding"
_WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
_DEFINING_FILES = (
    "modules.json",
    "config.json",
    "sentence_bert_config.json",
    "tokenizer.json",
    "1_Pooling/config.json",
)
_SUPPORTED_MODULES = (
    "sentence_transformers.models.Transformer",
    "sentence_transformers.models.Pooling",
    "sentence_transformers.models.Normalize",
)


def cache_dir() -> Path:
    """The folder exported models are kept in."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "quoteproof" / "onnx"


def runtime_available() -> bool:
    """Return True when onnxruntime and tokenizers can be imported."""
    return all(importlib.util.find_spec(name) for name in ("onnxruntime", "tokenizers"))


def unsupported_reason(source: Path) -> str | None:
    """Why the model folder `source` cannot be run here, or None when it can: a
    Transformer, then mean pooling, then optionally Normalize, with tokenizer.json
    and safetensors or PyTorch weights."""
    if not source.is_dir():
        return "not a local model folder"
    if not (source / "tokenizer.json").is_file():
        return "no tokenizer.json"
    if not any((source / name).is_file() for name in _WEIGHT_FILES):
        return "no model weights file"
    try:
        modules = json.loads((source / "modules.json").read_text(encoding="utf-8"))
        pooling = json.loads((source / "1_Pooling" / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return f"unreadable module configuration ({exc})"
    kinds = tuple(module.get("type") for module in modules)
    if kinds not in (_SUPPORTED_MODULES, _SUPPORTED_MODULES[:2]):
        return f"modules {', '.join(map(str, kinds))} are not Transformer + Pooling"
    modes = sorted(
        key for key, value in pooling.items() if key.startswith("pooling_mode") and value
    )
    if modes != ["pooling_mode_mean_tokens"]:
        return f"pooling {', '.join(modes)} is not mean pooling"
    return None


def model_digest(source: Path) -> str:
    """A hex digest of the files that define the model in `source`, of
    `EXPORTER_VERSION` and of the onnxruntime version (its optimizer rewrites the
    graph): the cache key of its exported graph."""
    import onnxruntime

    recipe = f"quoteproof-onnx-{EXPORTER_VERSION}-onnxruntime-{onnxruntime.__version__}"
    digest = hashlib.sha256(recipe.encode())
    for name in (*_DEFINING_FILES, *_WEIGHT_FILES):
        path = source / name
        if path.is_file():
            digest.update(name.encode() + b"\0")
            with path.open("rb") as file:
                digest.update(hashlib.file_digest(file, "sha256").digest())
    return digest.hexdigest()[:32]


def cached_model_path(source: Path) -> Path:
    """Where the exported graph of the model in `source` is kept."""
    return cache_dir() / f"{source.name}-{model_digest(source)}.onnx"


def max_seq_length(source: Path) -> int:
    """The token limit sentence-transformers truncates to: `max_seq_length` of
    sentence_bert_config.json, else 512."""
    try:
        config = json.loads((source / "sentence_bert_config.json").read_text(encoding="utf-8"))
        return int(config["max_seq_length"])
    except (OSError, ValueError, KeyError, TypeError):
        return 512


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class OnnxSentenceModel:
    """A mean-pooling sentence model in an exported ONNX graph (`graph`), tokenised
    from the model folder `source`. Raises onnxruntime's errors when the graph
    cannot load (a corrupt or truncated file). `device` is where it runs: `cuda`
    when the session took the CUDA provider, else `cpu`."""

    runtime = "onnx"

    def __init__(self, graph: Path, source: Path) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        options.intra_op_num_threads = _cores()
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = ort.InferenceSession(str(graph), options, providers=onnx_providers())
        self.device = "cuda" if CUDA_PROVIDER in self.session.get_providers() else "cpu"
        self._inputs = {item.name for item in self.session.get_inputs()}
        self.tokenizer = Tokenizer.from_file(str(source / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_seq_length(source))
        self.tokenizer.no_padding()
        self.dimensions = int(self.session.get_outputs()[0].shape[-1])

    def encode(
        self,
        texts: Sequence[str],
        batch_size: int,
        on_batch: Callable[[int], None] | None = None,
    ) -> Vectors:
        """Return one unit-length float32 row per text, in order. Texts are run in
        batches of `batch_size` of similar token counts (little padding);
        `on_batch(n)` is called after each batch of n texts."""
        encodings = self.tokenizer.encode_batch([text.strip() for text in texts])
        order = sorted(range(len(texts)), key=lambda i: -len(encodings[i].ids))
        vectors = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            vectors[rows] = self._run([encodings[i] for i in rows])
            if on_batch is not None:
                on_batch(len(rows))
        return vectors

    def _run(self, encodings: list[Any]) -> Vectors:
        width = max(len(encoding.ids) for encoding in encodings)
        feeds = {name: np.zeros((len(encodings), width), dtype=np.int64) for name in INPUT_NAMES}
        for row, encoding in enumerate(encodings):
            length = len(encoding.ids)
            feeds["input_ids"][row, :length] = encoding.ids
            feeds["attention_mask"][row, :length] = 1
            feeds["token_type_ids"][row, :length] = encoding.type_ids
        used = {name: value for name, value in feeds.items() if name in self._inputs}
        pooled = np.asarray(self.session.run([OUTPUT_NAME], used)[0], dtype=np.float32)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: Vectors = pooled / np.maximum(norms, 1e-12)
        return unit
