"""Spans of a text (`(start, end)` offsets into it) trimmed to its words: the bounds
a parser gives its blocks, a chunker its sentences and a quote checker the sentences
of a claimed quote, so all of them agree on where a sentence starts and ends."""

from __future__ import annotations

from quoteproof.sentences import sentence_bounds


def _is_trimmed_char(char: str) -> bool:
    return char.isspace() or char == "\ufeff"


def trim_span(text: str, start: int, end: int) -> tuple[int, int]:
    """Shrink `text[start:end]` past surrounding whitespace (and U+FEFF) on both ends.

    Returns the new `(start, end)`; an all-whitespace span comes back empty
    (`start == end`). O(length of the whitespace removed).
    """
    while start < end and _is_trimmed_char(text[start]):
        start += 1
    while end > start and _is_trimmed_char(text[end - 1]):
        end -= 1
    return start, end


def sentence_spans(text: str, start: int, end: int, language: str = "en") -> list[tuple[int, int]]:
    """Return the trimmed, non-empty sentences of `text[start:end]` as absolute spans.

    Sentences come from sentencex, in linear time (`sentences.sentence_bounds`);
    spans are in order and do not overlap (overlapping boundaries are merged). If
    sentencex finds none, the whole trimmed span is one sentence.
    """
    spans: list[tuple[int, int]] = []
    for bound_start, bound_end in sentence_bounds(language, text[start:end]):
        first, last = trim_span(text, start + bound_start, start + bound_end)
        if first >= last:
            continue
        if spans and first < spans[-1][1]:
            spans[-1] = (spans[-1][0], max(last, spans[-1][1]))
        else:
            spans.append((first, last))
    if not spans:
        whole = trim_span(text, start, end)
        if whole[0] < whole[1]:
            spans.append(whole)
    return spans
