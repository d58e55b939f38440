"""Documents made of paragraphs, one chunk each, for the BM25 tests of both stores."""

from __future__ import annotations

from quoteproof.model import sha256_text
from quoteproof.store.base import NewChunk, NewDocument


def paragraph_doc(path: str, paragraphs: list[str], collection: str = "default") -> NewDocument:
    """A document of `paragraphs` (joined by blank lines), each a chunk labelled
    "label" and its first word, in `collection`."""
    text = "\n\n".join(paragraphs)
    chunks, offset = [], 0
    for paragraph in paragraphs:
        label = "label " + paragraph.split()[0]
        chunks.append(NewChunk(offset, offset + len(paragraph), (), label))
        offset += len(paragraph) + 2
    return NewDocument(
        path, "T", "text", text, sha256_text(text), tuple(chunks), collection=collection
    )
