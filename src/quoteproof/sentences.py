"""Sentence boundaries in time linear in the text, whatever the text.

sentencex finds sentences well, but on some runs of quote marks its work grows with
the square of the run (`'a''` repeated: 160 KB took 14 s, a megabyte minutes; also
backticks and guillemets, with or without spaces). So `sentence_bounds` never gives
it more than `WINDOW` characters at a time. It reads the text window by window:
the sentences sentencex finds in a window are kept, except the last, which may run
on past the window's end; the next window starts where that one starts. A sentence
that starts in the first half of a window and runs past its end (longer than half a
window) is cut at the window's last whitespace (or its end). Each window moves on by
at least half a window, so sentencex reads at most about twice the text, in pieces
of at most `WINDOW` characters. On text whose sentences are shorter than half a
window, the sentences are sentencex's own, but for whitespace at their ends.

`runs_on` tells whether a piece of text carries on the sentence another stops in (a
paragraph or column broken mid-sentence).
"""

from __future__ import annotations

import re

import sentencex

WINDOW = 2000
"""Most characters sentencex is given at once."""

_LAST_SPACE = re.compile(r"\s(?=\S*\Z)")
CLOSING = tuple(".!?:;)\"'”’")
"""Characters a sentence, or a line that is no sentence's middle, ends with."""
CONNECTORS = frozenset("a an and as at by for in of on or the to with".split())
GOES_ON = CONNECTORS | frozenset("be is are was were than about approximately".split())
"""Words after which a sentence goes on (text that ends with one stops mid-sentence)."""
_AMOUNT_START = re.compile(r"[$€£¥₹]?\d")
_ENUMERATOR = re.compile(r"(?:[a-z]|[ivx]+)[.)]\s")
"""A list item's letter or roman numeral ("b.", "iii)"): an item of its own, not a
sentence going on."""


def runs_on(before: str, after: str) -> bool:
    """Whether the text `after` carries on the sentence `before` stops in: `before` ends
    neither as a sentence does (`CLOSING`) nor on a capital (a line in capitals) and
    `after` starts in lower case, but not with a list item's letter or numeral
    (`_ENUMERATOR`: "iii. Use tissues"), or with a number or an amount after a word
    that cannot end a sentence (`GOES_ON`: "... the average total cost per operator to
    be" | "$7,650 (90 work-hours ...")."""
    before = before.rstrip()
    if not before or _ENUMERATOR.match(after):
        return False
    if before.endswith(CLOSING) or before[-1].isupper():
        return False  # a sentence's end, or a line in capitals ("REFERENCES")
    if after[:1].islower():
        return True
    last = before.rsplit(None, 1)[-1].lower()
    return _AMOUNT_START.match(after) is not None and last in GOES_ON


def _cut(text: str, start: int, end: int) -> int:
    """Where to cut a long sentence that must end in `text[start:end]`: at the last
    whitespace in it (not at `start`), else at `end`."""
    space = _LAST_SPACE.search(text, start + 1, end)
    return space.start() if space else end


def sentence_bounds(language: str, text: str) -> list[tuple[int, int]]:
    """The sentences of `text` as (start, end) offsets, in order and not
    overlapping, as sentencex finds them for `language`, found window by window
    (see the module docstring). O(len(text)): sentencex is called on at most
    `2 * len(text) / WINDOW + 1` pieces of at most `WINDOW` characters."""
    bounds: list[tuple[int, int]] = []
    position, length, half = 0, len(text), WINDOW // 2
    while position < length:
        end = min(length, position + WINDOW)
        found = [
            (position + bound["start_index"], position + bound["end_index"])
            for bound in sentencex.get_sentence_boundaries(language, text[position:end])
        ]
        if end == length:
            bounds.extend(found)
            break
        last = found.pop()[0] if found else position
        bounds.extend(found)
        if last >= position + half:
            position = last
            continue
        cut = _cut(text, max(last, position + half), end)
        bounds.append((last, cut))
        position = cut
    return bounds
