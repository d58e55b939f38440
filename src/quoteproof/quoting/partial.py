"""Partial quotes: the longest run of a claimed quote's sentences that the source has.

A model may quote two sentences verbatim and then add a third of its own. When the
whole quote does not resolve, `longest_run` splits it at sentence boundaries
(sentencex, through `sentence_spans`) and tries runs of consecutive sentences, the
longest first and, among equally long runs, the earliest: the first that resolves is
the part shown, and the sentences before and after it (`rest`) are what the caller
rejects. Runs whose words are fewer than `MIN_PARTIAL_WORDS` are never tried, and a
quote of more than `MAX_PARTIAL_SENTENCES` sentences is not split (the number of
runs grows with its square).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from quoteproof.text.spans import sentence_spans

__all__ = ["MAX_PARTIAL_SENTENCES", "MIN_PARTIAL_WORDS", "Run", "longest_run", "word_count"]

MIN_PARTIAL_WORDS = 6
"""A part of a quote shorter than this many words is never shown on its own."""
MAX_PARTIAL_SENTENCES = 6
"""Quotes of more sentences than this are not split into parts."""

T = TypeVar("T")


@dataclass(frozen=True)
class Run(Generic[T]):
    """The part `claimed[start:end]` of a claimed quote, what it resolved to, and the
    stripped, non-empty parts of `claimed` before and after it (`rest`)."""

    start: int
    end: int
    found: T
    rest: tuple[str, ...]


def word_count(text: str) -> int:
    """The whitespace-separated words of `text`."""
    return len(text.split())


def longest_run(claimed: str, resolve: Callable[[str], T | None]) -> Run[T] | None:
    """The longest run of consecutive sentences of `claimed`, short of all of them,
    that `resolve` resolves (not None), with what it resolved to; the earliest of
    equally long runs. None when `claimed` has one sentence or more than
    `MAX_PARTIAL_SENTENCES`, or no run of at least `MIN_PARTIAL_WORDS` words resolves.

    Calls `resolve` at most n(n-1)/2 times for n sentences, longest runs first.
    """
    spans = sentence_spans(claimed, 0, len(claimed))
    n = len(spans)
    if not 2 <= n <= MAX_PARTIAL_SENTENCES:
        return None
    for size in range(n - 1, 0, -1):
        for first in range(n - size + 1):
            start, end = spans[first][0], spans[first + size - 1][1]
            words = claimed[start:end]
            if word_count(words) < MIN_PARTIAL_WORDS:
                continue
            found = resolve(words)
            if found is not None:
                rest = (claimed[:start].strip(), claimed[end:].strip())
                return Run(start, end, found, tuple(part for part in rest if part))
    return None
