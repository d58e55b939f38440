"""Finding the retrieved chunks a test scripts a model's reply around."""

from __future__ import annotations

from quoteproof import Index


def ref_of(index: Index, question: str, words: str) -> str:
    """The ref of the chunk retrieved for `question` (top 5) that contains `words`."""
    for hit in index.search(question, top_k=5):
        if words in hit.chunk.text:
            return hit.chunk.ref
    raise AssertionError(f"no retrieved chunk contains {words!r}")
