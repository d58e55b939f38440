"""The vectors a store keeps: what a chunk's vector is made from and stored under,
the embedding model they come from, and the checks every store makes on them.

Vectors are keyed by the SHA-256 of a chunk's embedding input (`embedding_input`),
not by the chunk: a chunk whose text and context did not change between versions
keeps its vectors, and only new or changed chunks are embedded. A key holds one
vector per passage of the chunk (`retrieval.embed_index`: a chunk longer than the
model reads is embedded in passages it reads whole), and dense search scores a chunk
by its best passage. Vectors are derived data written after the document; a chunk
without them is still found by BM25.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from quoteproof.errors import StoreError
from quoteproof.model import sha256_text

Vectors = NDArray[np.float32]
"""Rows of unit-length float32 vectors (one row per text)."""


def embedding_input(title: str, section: tuple[str, ...], text: str) -> str:
    """Return the text embedded for a chunk: its context line, then its text.

    The context is the document title and section path, leaving out parts the text
    already begins with and repeats of the previous part (a Markdown H1 that is
    also the title), so short chunks keep their topic and long ones lose little of
    the model's input length.
    """
    context: list[str] = []
    for part in (title, *section):
        part = part.strip()
        if part and not text.startswith(part) and (not context or context[-1] != part):
            context.append(part)
    return f"{' › '.join(context)}\n{text}" if context else text


def embed_key(title: str, section: tuple[str, ...], text: str) -> str:
    """Return the key a chunk's vector is stored under (SHA-256 of its embedding input)."""
    return sha256_text(embedding_input(title, section, text))


@dataclass(frozen=True)
class EmbeddingSpace:
    """The embedding model an index's vectors come from, and their dimension."""

    model: str
    dimensions: int


@dataclass(frozen=True)
class PendingEmbedding:
    """Vectors the index lacks: their key and the text to embed (`embedding_input`),
    with the parts it is made of (the chunk's document title, section path and text)
    for cutting it into passages."""

    key: str
    text: str
    title: str = field(default="", compare=False)
    section: tuple[str, ...] = field(default=(), compare=False)
    body: str = field(default="", compare=False)


EMBEDDING_SPACE_SETTING = "embedding_space"
"""The setting under which a store records its `EmbeddingSpace`."""

TRUNCATED_VECTORS_SETTING = "truncated_vectors"
"""Set (to "1") by the migration to schema 7 in an index that held vectors: they
were made one per chunk, truncated to what the model reads, so the tails of long
chunks are invisible to dense search until the index is rebuilt."""


def encode_space(space: EmbeddingSpace) -> str:
    """Return `space` as the JSON text stores keep in `EMBEDDING_SPACE_SETTING`."""
    return json.dumps({"model": space.model, "dimensions": space.dimensions})


def decode_space(value: str) -> EmbeddingSpace:
    """Inverse of `encode_space`."""
    data = json.loads(value)
    return EmbeddingSpace(data["model"], int(data["dimensions"]))


def distinct_pending(
    rows: Iterable[tuple[str, str, tuple[str, ...], str]],
) -> list[PendingEmbedding]:
    """Turn `(embed_key, title, section, text)` rows of chunks without vectors into one
    `PendingEmbedding` per distinct key, in row order."""
    pending: dict[str, PendingEmbedding] = {}
    for key, title, section, text in rows:
        if key not in pending:
            whole = embedding_input(title, section, text)
            pending[key] = PendingEmbedding(key, whole, title, section, text)
    return list(pending.values())


def embedding_space_mismatch(
    location: str, recorded: EmbeddingSpace, asked: EmbeddingSpace | str
) -> str:
    """The message of the error raised when an index is used with a second embedding
    model (`asked`: that model's space, or its name)."""
    if isinstance(asked, EmbeddingSpace):
        asked = f"{asked.model} ({asked.dimensions} dimensions)"
    return (
        f"index {location} holds vectors of {recorded.model} ({recorded.dimensions} dimensions), "
        f"not of {asked}; use that model, or a new index"
    )


def vector_parts(keys: list[str], parts: Sequence[int] | None) -> list[int]:
    """How many rows of `add_embeddings`' vectors belong to each key (one each when
    `parts` is None); raises StoreError for a count below 1 or of the wrong length."""
    counts = [1] * len(keys) if parts is None else [int(n) for n in parts]
    if len(counts) != len(keys) or any(n < 1 for n in counts):
        raise StoreError(f"expected one count of at least 1 per key, got {list(counts)}")
    return counts


def check_vectors(
    location: str,
    space: EmbeddingSpace | None,
    keys: list[str],
    vectors: Vectors,
    parts: Sequence[int] | None = None,
) -> list[int]:
    """Raise StoreError unless `vectors` has, in the recorded dimension, one row per
    key, or `parts[i]` rows for `keys[i]`; return the rows of each key."""
    if space is None:
        raise StoreError(f"index {location} has no embedding model recorded yet")
    counts = vector_parts(keys, parts)
    if vectors.ndim != 2 or vectors.shape != (sum(counts), space.dimensions):
        raise StoreError(
            f"expected {sum(counts)} vectors of {space.dimensions} dimensions for index "
            f"{location}, got an array of shape {vectors.shape}"
        )
    return counts
