"""Retrieval fixtures for tests: known questions and paraphrases of the test corpus, and the
retrieved chunk a test scripts a model's reply around."""

from __future__ import annotations

from quoteproof import Index

# Words of the demo corpus that BM25 misses and the embedding model finds.
PARAPHRASE = "hypertension increases chance of a cerebrovascular accident"

# Questions the tiny test corpus answers (True) and does not (False), for calibration.
LABELLED = [
    ("What raises the risk of stroke?", True),
    ("What is the remdesivir dose on the first day?", True),
    ("Which antivirals treat shingles?", True),
    ("Who won the football world cup in 1998?", False),
    ("What is the price of bitcoin?", False),
    ("How do I bake sourdough bread?", False),
]


def ref_of(index: Index, question: str, words: str) -> str:
    """The ref of the chunk retrieved for `question` (top 5) that contains `words`."""
    for hit in index.search(question, top_k=5):
        if words in hit.chunk.text:
            return hit.chunk.ref
    raise AssertionError(f"no retrieved chunk contains {words!r}")
