"""The `extractive` backend: no language model, answers with quotes only.

It reads the question and the retrieved sources directly (not the prompt) and
replies in the model-facing protocol with the most relevant sentences of the
best-ranked sources, so its answers go through the same parse and resolve path
as a real model's.
"""

from __future__ import annotations

from dataclasses import dataclass

import sentencex

from quoteproof.llm.base import Completion, CompletionRequest, TextSink
from quoteproof.model import NO_MODEL_BACKEND, Chunk
from quoteproof.terms import query_terms, stem, words

MAX_QUOTES = 3
WHOLE_CHUNK_CHARS = 400
WINDOW_SENTENCES = 2


@dataclass(frozen=True)
class _Passage:
    ref: str
    text: str | None  # None: the whole chunk
    matched: int


def _matched_terms(text: str, terms: set[str]) -> int:
    return len(terms & {stem(w) for w in words(text)})


def _best_passage(chunk: Chunk, terms: set[str]) -> _Passage:
    """Return the window of up to two sentences of `chunk` that matches most terms."""
    if len(chunk.text) <= WHOLE_CHUNK_CHARS:
        return _Passage(chunk.ref, None, _matched_terms(chunk.text, terms))
    sentences = [
        chunk.text[b["start_index"] : b["end_index"]]
        for b in sentencex.get_sentence_boundaries("en", chunk.text)
    ]
    best = _Passage(chunk.ref, chunk.text, -1)
    for i in range(len(sentences)):
        window = "".join(sentences[i : i + WINDOW_SENTENCES]).strip()
        matched = _matched_terms(window, terms)
        if window and matched > best.matched:
            best = _Passage(chunk.ref, window, matched)
    return best


def _whole_text(passage: _Passage, sources: tuple[Chunk, ...]) -> str:
    return next(chunk.text for chunk in sources if chunk.ref == passage.ref)


def extract_answer(question: str, sources: tuple[Chunk, ...]) -> str:
    """Return a protocol reply quoting the best sentences of up to three sources.

    A source is quoted only if it shares at least half as many question terms as
    the best one (and at least one); with no match at all the reply is `<no-answer/>`.
    """
    terms = {stem(t) for t in query_terms(question)}
    passages = [_best_passage(chunk, terms) for chunk in sources]
    best = max((p.matched for p in passages), default=0)
    if best <= 0:
        return "<no-answer/>"
    chosen: dict[str, _Passage] = {}  # keyed by text: repeated passages are quoted once
    for passage in passages:
        text = passage.text if passage.text is not None else _whole_text(passage, sources)
        if passage.matched * 2 >= best and len(chosen) < MAX_QUOTES:
            chosen.setdefault(" ".join(text.split()), passage)
    lines = []
    for passage in chosen.values():
        if passage.text is None:
            lines.append(f'<quote ref="{passage.ref}"/>')
        else:
            lines.append(f'<quote ref="{passage.ref}">{passage.text}</quote>')
    return "\n".join(lines)


class ExtractiveBackend:
    """A `Backend` that needs no model server: quotes the best-matching sentences."""

    name = NO_MODEL_BACKEND
    model: str | None = None
    server: str | None = None
    constrained = False

    def excess_tokens(self, request: CompletionRequest) -> int:
        """0: the context window is not known here."""
        return 0

    def complete(self, request: CompletionRequest) -> Completion:
        """Answer `request.question` from `request.sources` with quotes only."""
        return Completion(text=extract_answer(request.question, request.sources), model=None)

    def stream(self, request: CompletionRequest, on_text: TextSink) -> Completion:
        """Like `complete`; `on_text` is called once, with the whole reply."""
        completion = self.complete(request)
        on_text(completion.text)
        return completion
