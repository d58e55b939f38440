"""Checking generated prose sentence by sentence: the refs each sentence cites
(every mode), the `cite` mode's rule that every sentence cites a retrieved source,
and which sentences an answer may show (`screen_prose`).

Prose is split into sentences with sentencex (`sentences.sentence_bounds`). Markers
written after a sentence's full stop (`Text. [S1] Next …`) belong to the sentence
before them. Fragments with no letter or digit (a lone full stop after a quote) are
not sentences.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from quoteproof.model import ProseSegment, Rejected, Segment
from quoteproof.quoting.parse import ProseItem, split_citations
from quoteproof.quoting.support import support_problem
from quoteproof.sentences import sentence_bounds

Strictness = Literal["strict", "lenient"]
"""`strict`: every sentence must carry a valid citation; `lenient`: sentences
without one are dropped and the answer is marked partial."""

UNCITED = "sentence cites no retrieved source"
"""Why a sentence that cites no retrieved source is not shown."""

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
    for bound_start, bound_end in sentence_bounds(language, raw):
        piece = raw[bound_start:bound_end]
        leading = _LEADING_MARKERS.match(piece)
        if pieces and leading is not None:
            markers = split_citations(leading.group())
            if markers is not None and not markers.text:  # refs only, no "[sic]"
                pieces[-1] += leading.group()
                piece = piece[leading.end() :]
        pieces.append(piece)
    return pieces


def _sentence(text: str, citations: Sequence[str], refs: Collection[str]) -> Sentence:
    cited = tuple(dict.fromkeys(citations))
    known = tuple(ref for ref in cited if ref in refs)
    return Sentence(text, known, tuple(ref for ref in cited if ref not in refs))


def split_sentences(item: ProseItem, refs: Collection[str], language: str = "en") -> list[Sentence]:
    """Return the sentences of `item.raw` with the refs each one cites.

    `refs` are the retrieved sources' refs. An item without `raw` (one sentence a
    strategy has already split off and checked) is that one sentence with its
    `citations`. O(length of the prose).
    """
    if not item.raw:
        return [_sentence(item.text, item.citations, refs)] if _WORD.search(item.text) else []
    sentences = []
    for piece in _pieces(item.raw, language):
        parsed = split_citations(piece)
        if parsed is not None and _WORD.search(parsed.text):
            sentences.append(_sentence(parsed.text, parsed.citations, refs))
    return sentences


def excerpt(text: str, limit: int = 80) -> str:
    """`text` on one line (whitespace runs as one space), cut to `limit` characters
    with "…" when longer."""
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
            problems.append(f"sentence {number} cites no source: {excerpt(sentence.text)!r}")
        for ref in sentence.unknown:
            problems.append(f"sentence {number} cites '{ref}', which is not a retrieved source")
    return problems


def screen_prose(
    segments: Sequence[Segment],
    passages: Mapping[str, str],
    shared: Mapping[str, str] | None = None,
) -> tuple[list[Segment], list[Rejected]]:
    """Return `segments` without the generated sentences an answer may not show, and
    those sentences with the reason (each distinct sentence and reason once).

    `passages` maps each ref a sentence may cite to the passage's text; `shared`
    (the answer's data results, by pointer) may be cited too, and every sentence may
    rest on them. A prose segment (one sentence) is taken out when it cites neither
    (`UNCITED`), or when its claims are not in what it cites and `shared`
    (`support.support_problem`); a repeat of a sentence already shown (the same
    words) is dropped, so it is shown once. Quote and data segments are kept as
    they are. O(total length of the prose and of the texts it rests on).
    """
    shared = shared or {}
    shown: list[Segment] = []
    removed: dict[Rejected, None] = {}
    seen: set[str] = set()
    for segment in segments:
        if not isinstance(segment, ProseSegment):
            shown.append(segment)
            continue
        refs = [ref for ref in segment.citations if ref in passages or ref in shared]
        problem: str | None = UNCITED
        if refs:
            rests_on = [*refs, *(ref for ref in shared if ref not in refs)]
            texts = [passages[ref] if ref in passages else shared[ref] for ref in rests_on]
            problem = support_problem(segment.text, rests_on, texts)
        key = " ".join(segment.text.split())
        if problem is not None:
            removed[Rejected(segment.text, problem)] = None
        elif key not in seen:
            seen.add(key)
            shown.append(segment)
    return shown, list(removed)
