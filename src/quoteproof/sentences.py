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
"""

from __future__ import annotations

import re

import sentencex

WINDOW = 2000
"""Most characters sentencex is given at once."""

_LAST_SPACE = re.compile(r"\s(?=\S*\Z)")


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
