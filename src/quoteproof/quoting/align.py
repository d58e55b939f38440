"""Locate the model's approximate words inside a chunk's raw text.

`find_span(needle, haystack)` returns offsets into the *raw* `haystack`, so that the
caller can read the verbatim source text `haystack[start:end]`. Nothing here ever
returns or builds quote text from the needle; only offsets leave this module.

Order of attempts, first success wins:

1. exact: the stripped needle (and its HTML-unescaped and de-quoted variants) occurs
   in `haystack` at word boundaries -> match "exact", score 100;
2. normalised: the same after `normalize` on both sides, mapped back through the
   offset map -> "normalized", score 100;
3. ellipsis: a needle whose fragments are joined by "..." or "…" resolves when every
   fragment resolves in order -> span from the first fragment's start to the last's
   end, "normalized" when every fragment was exact/normalised else "fuzzy", score =
   the lowest fragment score;
4. fuzzy: `rapidfuzz.fuzz.partial_ratio_alignment` finds a window in the normalised
   haystack, a hill-climb over word boundaries refines both ends by `fuzz.ratio`, and
   the span is accepted when `match_score(normalize(needle),
   normalize(haystack[start:end]))`, the reported score, is at least `threshold`:
   the better of `fuzz.ratio` and `fuzz.token_sort_ratio`, so that words a model
   swapped cost little while words it invented still count against it.

Every returned span is at word boundaries: it neither starts nor ends inside a word.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Literal

from rapidfuzz import fuzz

from quoteproof.quoting.normalize import (
    ZERO_WIDTH,
    normalize,
    normalize_with_map,
    raw_span,
    unescape_entities,
)

__all__ = ["MIN_WORD_CHARS", "Alignment", "find_span", "match_score", "snap_to_words"]

MIN_WORD_CHARS = 3
"""Needles with fewer word characters than this (after normalising) never match."""

AlignKind = Literal["exact", "normalized", "fuzzy"]


@dataclass(frozen=True)
class Alignment:
    """Where a needle was found: `haystack[start:end]`, how, and how well (0-100)."""

    start: int
    end: int
    match: AlignKind
    score: float


def _is_word(c: str) -> bool:
    return c.isalnum() or c == "_"


def _at_boundary(text: str, i: int) -> bool:
    """True when position `i` of `text` is not strictly inside a word."""
    return i <= 0 or i >= len(text) or not (_is_word(text[i - 1]) and _is_word(text[i]))


def _skippable(c: str) -> bool:
    return c.isspace() or c in ZERO_WIDTH


def snap_to_words(text: str, start: int, end: int) -> tuple[int, int]:
    """Widen `text[start:end]` to whole words, then trim surrounding whitespace.

    A span that starts (ends) inside a word is extended left (right) to the word's
    edge; whitespace and zero-width characters at either end are then dropped. The
    result is never empty when the input span held a word character. `start` and
    `end` are clamped to `[0, len(text)]`.

    Complexity: O(length of the words at the two ends + trimmed whitespace).
    """
    n = len(text)
    start = max(0, min(start, n))
    end = max(start, min(end, n))
    while 0 < start < n and _is_word(text[start - 1]) and _is_word(text[start]):
        start -= 1
    while 0 < end < n and _is_word(text[end - 1]) and _is_word(text[end]):
        end += 1
    while start < end and _skippable(text[start]):
        start += 1
    while end > start and _skippable(text[end - 1]):
        end -= 1
    return start, end


_ELLIPSIS = re.compile(r"\s*[\[(]?(?:\.{3,}|…|\.\s\.\s\.)[\])]?\s*")
_OPEN_QUOTES = "\"'“‘«„‚"
_CLOSE_QUOTES = "\"'”’»“‘"


def _variants(needle: str) -> list[str]:
    """The stripped needle, its HTML-unescaped form, and that without wrapping quotes.

    Ordered from most literal to most cleaned; duplicates removed. The last one is
    the needle used for fuzzy matching.
    """
    out = [needle.strip()]
    unescaped = unescape_entities(out[0]).strip()
    out.append(unescaped)
    if len(unescaped) >= 2 and unescaped[0] in _OPEN_QUOTES and unescaped[-1] in _CLOSE_QUOTES:
        inner = unescaped[1:-1]
        if unescaped[0] not in inner and unescaped[-1] not in inner:
            out.append(inner.strip())
    return list(dict.fromkeys(v for v in out if v))


def _has_enough_word_chars(text: str) -> bool:
    """True when `text` holds at least MIN_WORD_CHARS word characters (stops early)."""
    count = 0
    for c in text:
        if _is_word(c):
            count += 1
            if count >= MIN_WORD_CHARS:
                return True
    return False


_TOKEN = re.compile(r"\S+")
_WORD = re.compile(r"\w+")
_PUNCTUATION = re.compile(r"[^\w\s]+")


class _Prepared:
    """A haystack's normalised form and offset map; word boundaries computed lazily.

    `starts`/`ends` are the sorted positions in `norm` where a fuzzy span may start
    or end: the edges of whitespace-delimited tokens, of runs of word characters and
    of runs of punctuation (every place a span may start or end without cutting a word).
    """

    def __init__(self, haystack: str) -> None:
        self.norm, self.offsets = normalize_with_map(haystack)

    @cached_property
    def _boundaries(self) -> tuple[list[int], list[int]]:
        starts: set[int] = set()
        ends: set[int] = set()
        for pattern in (_TOKEN, _WORD, _PUNCTUATION):
            for m in pattern.finditer(self.norm):
                starts.add(m.start())
                ends.add(m.end())
        return sorted(starts), sorted(ends)

    @property
    def starts(self) -> list[int]:
        return self._boundaries[0]

    @property
    def ends(self) -> list[int]:
        return self._boundaries[1]


@lru_cache(maxsize=128)
def _prepare(haystack: str) -> _Prepared:
    """Normalise `haystack` once; cached because a chunk is often searched many times."""
    return _Prepared(haystack)


def _find_exact(needle: str, haystack: str) -> tuple[int, int] | None:
    """First occurrence of `needle` in `haystack` whose ends are at word boundaries."""
    i = haystack.find(needle)
    while i >= 0:
        j = i + len(needle)
        if _at_boundary(haystack, i) and _at_boundary(haystack, j):
            return i, j
        i = haystack.find(needle, i + 1)
    return None


def _find_normalized(norm_needle: str, haystack: str, prep: _Prepared) -> tuple[int, int] | None:
    """First normalised occurrence mapped to a raw span at word boundaries."""
    i = prep.norm.find(norm_needle)
    while i >= 0:
        start, end = raw_span(haystack, prep.offsets, i, i + len(norm_needle))
        if _at_boundary(haystack, start) and _at_boundary(haystack, end):
            return start, end
        i = prep.norm.find(norm_needle, i + 1)
    return None


def _nearby(positions: list[int], target: int, radius: int) -> list[int]:
    """The `radius` positions on each side of `target` (and `target`'s own, if any)."""
    k = bisect.bisect_left(positions, target)
    return positions[max(0, k - radius) : k + radius + 1]


_RADIUS = 3  # boundaries tried on each side of an end, per hill-climb step


def _find_fuzzy(
    norm_needle: str, haystack: str, prep: _Prepared, threshold: float
) -> Alignment | None:
    """Fuzzy alignment; see the module docstring. O(len(haystack) + steps * len(needle))."""
    norm = prep.norm
    if not norm or not prep.starts:
        return None
    if len(norm_needle) >= len(norm):
        s0, e0 = 0, len(norm)
    else:
        window = fuzz.partial_ratio_alignment(
            norm_needle, norm, score_cutoff=max(0.0, threshold - 30.0)
        )
        if window is None or window.score <= 0:
            return None
        s0, e0 = window.dest_start, window.dest_end
    # Start from the boundaries nearest the window, then hill-climb on both ends.
    s = prep.starts[min(bisect.bisect_left(prep.starts, s0), len(prep.starts) - 1)]
    later_ends = prep.ends[bisect.bisect_left(prep.ends, max(e0, s + 1)) :]
    e = later_ends[0] if later_ends else prep.ends[-1]
    if e <= s:
        return None
    best = fuzz.ratio(norm_needle, norm[s:e])
    improved = True
    while improved:
        improved = False
        for cs in _nearby(prep.starts, s, _RADIUS):
            for ce in _nearby(prep.ends, e, _RADIUS):
                if ce <= cs:
                    continue
                score = fuzz.ratio(norm_needle, norm[cs:ce], score_cutoff=best)
                if score > best:
                    best, s, e, improved = score, cs, ce, True
    start, end = raw_span(haystack, prep.offsets, s, e)
    start, end = snap_to_words(haystack, start, end)
    score = match_score(norm_needle, normalize(haystack[start:end]))
    if score < threshold:
        return None
    return Alignment(start, end, "fuzzy", score)


def match_score(norm_needle: str, norm_span: str) -> float:
    """How well a fuzzy span matches the needle (both normalised), 0-100: the better
    of `fuzz.ratio` (edits in order) and `fuzz.token_sort_ratio` (the same, after
    sorting the words, so that swapped words cost little)."""
    return max(fuzz.ratio(norm_needle, norm_span), fuzz.token_sort_ratio(norm_needle, norm_span))


def _find_literal(variants: list[str], haystack: str) -> Alignment | None:
    """Steps 1 and 2: exact, then normalised substring, for each needle variant."""
    for v in variants:
        hit = _find_exact(v, haystack)
        if hit is not None:
            return Alignment(hit[0], hit[1], "exact", 100.0)
    prep = _prepare(haystack)
    for v in variants:
        nv = normalize(v)
        if not nv:
            continue
        hit = _find_normalized(nv, haystack, prep)
        if hit is not None:
            return Alignment(hit[0], hit[1], "normalized", 100.0)
    return None


def _find_one(needle: str, haystack: str, threshold: float) -> Alignment | None:
    """Steps 1, 2 and 4 for a needle taken as one piece (no ellipsis handling)."""
    variants = _variants(needle)
    if not variants:
        return None
    norm_needle = normalize(variants[-1])
    if not _has_enough_word_chars(norm_needle):
        return None
    return _find_literal(variants, haystack) or _find_fuzzy(
        norm_needle, haystack, _prepare(haystack), threshold
    )


def _find_fragments(fragments: list[str], haystack: str, threshold: float) -> Alignment | None:
    """Step 3: every fragment, in order, each searched after the previous one's end."""
    pos = 0  # absolute end of the previous fragment
    found: list[Alignment] = []
    for fragment in fragments:
        hit = _find_one(fragment, haystack[pos:], threshold)
        if hit is None:
            return None
        found.append(Alignment(pos + hit.start, pos + hit.end, hit.match, hit.score))
        pos += hit.end
    literal = all(a.match in ("exact", "normalized") for a in found)
    kind: AlignKind = "normalized" if literal else "fuzzy"
    return Alignment(found[0].start, found[-1].end, kind, min(a.score for a in found))


def find_span(needle: str, haystack: str, *, threshold: float = 90.0) -> Alignment | None:
    """Find the model's words `needle` in the raw chunk text `haystack`.

    Returns an `Alignment` whose `start`/`end` index the raw `haystack` (never the
    normalised text), at word boundaries and without surrounding whitespace, or None
    when the needle has fewer than `MIN_WORD_CHARS` word characters after
    normalising, or nothing scores at least `threshold` (0-100, `fuzz.ratio` of the
    normalised needle and the normalised span).

    HTML entities in the needle (`&lt;`, `&amp;`, `&quot;`, `&#39;`, ...) are tried
    both as written and unescaped; quote marks wrapping the whole needle are tried
    with and without. See the module docstring for the order of attempts.

    Complexity: exact and normalised steps are O(len(haystack) + len(needle)) (the
    haystack's normalisation is cached per haystack string); the fuzzy step adds one
    `partial_ratio_alignment` call and a hill-climb of O(steps * 49) `fuzz.ratio`
    calls on needle-length strings. Typically well under 1 ms for exact/normalised
    matches and a few ms for fuzzy ones on a 1500-character chunk.
    """
    variants = _variants(needle)
    if not variants:
        return None
    cleaned = variants[-1]
    if not _has_enough_word_chars(normalize(cleaned)):
        return None
    literal = _find_literal(variants, haystack)
    if literal is not None:
        return literal
    fragments = [f for f in _ELLIPSIS.split(cleaned) if _has_enough_word_chars(normalize(f))]
    if len(fragments) >= 2 or (len(fragments) == 1 and fragments[0] != cleaned):
        hit = _find_fragments(fragments, haystack, threshold)
        if hit is not None:
            return hit
    return _find_fuzzy(normalize(cleaned), haystack, _prepare(haystack), threshold)
