"""Checking citation-mandatory prose: every sentence ends with `[REF]` markers that
name retrieved sources (the `cite` answer mode).

Prose is split into sentences with sentencex. Markers written after a sentence's
full stop (`Text. [S1] Next …`) belong to the sentence before them. Fragments with
no letter or digit (a lone full stop after a quote) are not sentences.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Literal

import sentencex

from quoteproof.quoting.parse import ProseItem, split_citations

Strictness = Literal["strict", "lenient"]
"""`strict`: every sentence must carry a valid citation; `lenient`: sentences
without one are dropped and the answer is marked partial."""

_WORD = re.compile(r"\w")
_LEADING_MARKERS = re.compile(r"\A(\s*\[[^\[\]\n]{1,200}\])+")


@dataclass(frozen=True)
class Sentence:
    """One sentence of prose: its text without markers, the refs it cites that name
    retrieved sources (`known`), and those that do not (`unknown`)."""

    text: str
    known: tuple[str, ...]
    unknown: tuple[str, ...]

    @property
    def cited(self) -> bool:
        """True when the sentence cites at least one retrieved source."""
        return bool(self.known)


def _pieces(raw: str, language: str) -> list[str]:
    """Split `raw` into sentence strings, moving leading markers to the sentence before."""
    pieces: list[str] = []
    for bound in sentencex.get_sentence_boundaries(language, raw):
        piece = raw[bound["start_index"] : bound["end_index"]]
        leading = _LEADING_MARKERS.match(piece)
        if pieces and leading is not None:
            markers = split_citations(leading.group())
            if markers is not None and not markers.text:  # refs only, no "[sic]"
                pieces[-1] += leading.group()
                piece = piece[leading.end() :]
        pieces.append(piece)
    return pieces


def split_sentences(item: ProseItem, refs: Collection[str], language: str = "en") -> list[Sentence]:
    """Return the sentences of `item.raw` with the refs each one cites.

    `refs` are the retrieved sources' refs. O(length of the prose).
    """
    sentences = []
    for piece in _pieces(item.raw or item.text, language):
        parsed = split_citations(piece)
        if parsed is None or not _WORD.search(parsed.text):
            continue
        cited = tuple(dict.fromkeys(parsed.citations))
        known = tuple(ref for ref in cited if ref in refs)
        unknown = tuple(ref for ref in cited if ref not in refs)
        sentences.append(Sentence(parsed.text, known, unknown))
    return sentences


def _excerpt(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def sentence_problems(sentences: list[Sentence], strictness: Strictness) -> list[str]:
    """Return why `sentences` fail the citation check (empty: they pass).

    Strict: every sentence must cite a retrieved source and no marker may name an
    unknown ref. Lenient: nothing about single sentences is a failure (uncited ones
    are dropped by the caller).
    """
    if strictness == "lenient":
        return []
    problems = []
    for number, sentence in enumerate(sentences, start=1):
        if not sentence.known and not sentence.unknown:
            problems.append(f"sentence {number} cites no source: {_excerpt(sentence.text)!r}")
        for ref in sentence.unknown:
            problems.append(f"sentence {number} cites '{ref}', which is not a retrieved source")
    return problems
