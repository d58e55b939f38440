"""The `extractive` backend: no language model, answers with quotes only.

It reads the question and the retrieved sources directly (not the prompt) and
replies in the model-facing protocol with the sentences that answer best, so its
answers go through the same parse and resolve path as a real model's.

Each quotable unit of the sources (`llm.quotable`: sentences, list items and the
body rows of tables whose structure the index keeps, with headings, contents
lines, captions, fragments and front matter left out) is scored
by how much of the question it shares (term evidence) and, when an embedding model
is given, by its cosine similarity to the question plus that of its section heading;
lower-ranked sources lose a little. Up to MAX_QUOTES units scoring within
RELATIVE_CUTOFF of the best are quoted, best first; adjacent ones are joined.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from quoteproof.llm.base import Capability, Completion, CompletionRequest, TextSink
from quoteproof.llm.quotable import quotable_units
from quoteproof.model import NO_MODEL_BACKEND, Chunk
from quoteproof.store.base import Vectors
from quoteproof.terms import query_terms, stem, words

MAX_QUOTES = 3
RELATIVE_CUTOFF = 0.06
TERM_WEIGHT = 0.3
SECTION_WEIGHT = 0.3
RANK_PENALTY = 0.02

Embed = Callable[[Sequence[str]], Vectors]
"""Texts to unit-length vectors, one row per text (e.g. `Embedder.embed`)."""

TableRows = Callable[[Chunk], Sequence[tuple[int, int]]]
"""A chunk's table body rows, as spans of its text, in order."""


@dataclass(frozen=True)
class _Candidate:
    chunk: Chunk
    rank: int
    start: int
    end: int
    core: str


def _stems(text: str) -> set[str]:
    return {stem(w) for w in words(text)}


def _term_evidence(texts: Sequence[str], terms: set[str]) -> np.ndarray:
    """For each text, the share (0-1) of the question `terms` it contains, each term
    weighted by its rarity among `texts` (a term every text has counts little)."""
    present = [_stems(text) & terms for text in texts]
    weights = {t: np.log(1 + len(texts) / (1 + sum(t in p for p in present))) for t in terms}
    total = sum(weights.values())
    if not total:
        return np.zeros(len(texts))
    return np.array([sum(weights[t] for t in p) / total for p in present])


def _section(chunk: Chunk) -> str:
    return " › ".join(chunk.section) or chunk.label


def _scores(question: str, candidates: Sequence[_Candidate], embed: Embed | None) -> list[float]:
    terms = {stem(t) for t in query_terms(question)}
    lexical = _term_evidence([c.core for c in candidates], terms)
    ranks = np.array([c.rank for c in candidates], dtype=float)
    if embed is None:
        section = _term_evidence([_section(c.chunk) for c in candidates], terms)
        semantic = np.zeros(len(candidates))
    else:
        sections = list(dict.fromkeys(_section(c.chunk) for c in candidates))
        vectors = embed([question, *sections, *(c.core for c in candidates)])
        similarity = vectors[1:] @ vectors[0]
        by_section = dict(zip(sections, similarity[: len(sections)], strict=True))
        section = np.array([by_section[_section(c.chunk)] for c in candidates])
        semantic = similarity[len(sections) :]
    scores = semantic + TERM_WEIGHT * lexical + SECTION_WEIGHT * section - RANK_PENALTY * ranks
    if embed is None:  # without a model a unit must share a question word to count
        scores = np.where(lexical > 0, scores, -np.inf)
    return [float(s) for s in scores]


def _choose(candidates: Sequence[_Candidate], scores: Sequence[float]) -> list[_Candidate]:
    """The best candidates within RELATIVE_CUTOFF of the best, at most MAX_QUOTES,
    none overlapping another; adjacent ones of a chunk joined, best first."""
    order = sorted(range(len(candidates)), key=lambda i: -scores[i])
    if not order or scores[order[0]] == -np.inf:
        return []
    chosen: list[_Candidate] = []
    for i in order:
        c = candidates[i]
        if len(chosen) == MAX_QUOTES or scores[i] < scores[order[0]] - RELATIVE_CUTOFF:
            break
        merged = False
        for j, other in enumerate(chosen):
            if other.chunk.ref != c.chunk.ref:
                continue
            gap = c.chunk.text[min(other.end, c.end) : max(other.start, c.start)]
            if (c.start < other.end and other.start < c.end) or not gap.strip():
                chosen[j] = _Candidate(
                    c.chunk, c.rank, min(c.start, other.start), max(c.end, other.end), other.core
                )
                merged = True
                break
        if not merged:
            chosen.append(c)
    return chosen


def extract_answer(
    question: str,
    sources: Sequence[Chunk],
    embed: Embed | None = None,
    table_rows: TableRows | None = None,
) -> str:
    """Return a protocol reply quoting the units of `sources` that answer `question`
    best (see the module docstring); `<no-answer/>` when no unit qualifies.
    `table_rows` gives each source's table rows (each row a unit of its own)."""
    candidates = [
        _Candidate(chunk, rank, unit.start, unit.end, chunk.text[unit.core_start : unit.core_end])
        for rank, chunk in enumerate(sources)
        for unit in quotable_units(chunk.text, table_rows(chunk) if table_rows else ())
    ]
    chosen = _choose(candidates, _scores(question, candidates, embed)) if candidates else []
    if not chosen:
        return "<no-answer/>"
    return "\n".join(
        f'<quote ref="{c.chunk.ref}">{c.chunk.text[c.start : c.end]}</quote>' for c in chosen
    )


class ExtractiveBackend:
    """A `Backend` that needs no model server: quotes the best-matching sentences
    (and table rows, where `table_rows` gives them), ranked with `embed` (an
    embedding model) when given, else by shared words."""

    name = NO_MODEL_BACKEND
    model: str | None = None
    server: str | None = None
    capabilities: frozenset[Capability] = frozenset()

    def __init__(self, embed: Embed | None = None, table_rows: TableRows | None = None) -> None:
        self.embed = embed
        self.table_rows = table_rows

    def excess_tokens(self, request: CompletionRequest) -> int:
        """0: the context window is not known here."""
        return 0

    def complete(self, request: CompletionRequest) -> Completion:
        """Answer `request.question` from `request.sources` with quotes only."""
        reply = extract_answer(request.question, request.sources, self.embed, self.table_rows)
        return Completion(text=reply, model=None)

    def stream(self, request: CompletionRequest, on_text: TextSink) -> Completion:
        """Like `complete`; `on_text` is called once, with the whole reply."""
        completion = self.complete(request)
        on_text(completion.text)
        return completion
