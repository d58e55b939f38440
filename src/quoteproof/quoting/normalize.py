"""Text normalisation with an offset map back to the raw text.

The aligner compares the model's words with a chunk's words after normalising both,
then needs the span of the *raw* chunk text that produced a normalised match. This
module gives both at once: `normalize_with_map(text)` returns the normalised string
and, for every normalised character, the index of the raw character it came from.

Normalisation, in order, per unit (a character plus any combining marks and
zero-width characters after it):

- zero-width characters (U+200B..U+200D, U+FEFF) and the soft hyphen U+00AD: dropped;
- quote characters (‘ ’ ‚ ‛ ′ ` ´ -> ', “ ” „ ‟ ″ « » -> ") and dashes (‐ ‑ ‒ – — ― −
  -> -) are mapped to ASCII;
- Unicode NFKC, then casefold (a unit may expand to several characters: "ﬁ" -> "fi");
- any run of whitespace becomes one space; leading and trailing whitespace is dropped.

Pure functions, stdlib only. `normalize_with_map` is O(n) in the length of `text`;
runs of printable ASCII take a fast path (no per-character Python work beyond the
offset list), other units are normalised through a small cache.
"""

from __future__ import annotations

import html
import re
import unicodedata
from functools import lru_cache

__all__ = ["ZERO_WIDTH", "normalize", "normalize_with_map", "raw_span", "unescape_entities"]

ZERO_WIDTH = frozenset("\u200b\u200c\u200d\ufeff\u00ad")
"""Characters that normalisation drops (they never produce output)."""

_CHAR_MAP: dict[int, str] = {
    **{ord(c): "'" for c in "‘’‚‛′`´"},
    **{ord(c): '"' for c in "“”„‟″«»"},
    **{ord(c): "-" for c in "‐‑‒–—―−"},
    **{ord(c): "" for c in ZERO_WIDTH},
}

# A run of printable ASCII words joined by single ASCII whitespace characters, not
# followed by a combining mark or zero-width character (such a last character is left
# to the slow path, which composes it with its marks); or a run of whitespace.
_COMBINING_RANGES = (
    "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f\u200b-\u200d\ufeff\u00ad"
)
_SEGMENT = re.compile(
    rf"(?P<ascii>[!-~]+(?:[ \t\n\r\f\v][!-~]+)*(?![{_COMBINING_RANGES}]))|(?P<space>\s+)"
)
_ASCII_FIX = re.compile(r"[\t\n\r\f\v`]")


def _fix_ascii(m: re.Match[str]) -> str:
    return "'" if m.group() == "`" else " "


@lru_cache(maxsize=4096)
def _normalize_unit(unit: str) -> str:
    """Normalise one unit (a character and its combining marks); whitespace -> ' '."""
    text = unit.translate(_CHAR_MAP)
    text = unicodedata.normalize("NFKC", text)
    text = unicodedata.normalize("NFKC", text.casefold())
    text = text.translate(_CHAR_MAP)
    return "".join(" " if c.isspace() else c for c in text)


def normalize_with_map(text: str) -> tuple[str, list[int]]:
    """Return `(norm, offsets)` for `text`.

    Contract: `len(offsets) == len(norm) + 1`; `offsets[i]` is the index in `text`
    of the raw character (the start of its unit) that produced `norm[i]`;
    `offsets[-1] == len(text)`; `offsets` is non-decreasing. `norm` never starts or
    ends with a space and never holds two spaces in a row. Printable ASCII text
    without whitespace maps to its lowercase form with `offsets[i] == i`.

    Complexity: O(len(text)) time and memory.
    """
    parts: list[str] = []
    offsets: list[int] = []
    last_space = True  # True at the start: a leading space is never emitted
    n = len(text)
    pos = 0
    while pos < n:
        m = _SEGMENT.match(text, pos)
        if m is not None:
            if m.lastgroup == "ascii":
                run = m.group().lower()
                if _ASCII_FIX.search(run):
                    run = _ASCII_FIX.sub(_fix_ascii, run)
                parts.append(run)
                offsets.extend(range(pos, m.end()))
                last_space = False
            elif not last_space:
                parts.append(" ")
                offsets.append(pos)
                last_space = True
            pos = m.end()
            continue
        # Slow path: one character plus the combining marks (and zero-width characters,
        # which are dropped) that follow it, so that "e\u0301" composes like "é".
        if text[pos] in ZERO_WIDTH:  # dropped; never the start of a unit
            pos += 1
            continue
        end = pos + 1
        if not text[pos].isspace():
            while end < n and (unicodedata.combining(text[end]) or text[end] in ZERO_WIDTH):
                end += 1
        for c in _normalize_unit(text[pos:end]):
            if c == " ":
                if last_space:
                    continue
                last_space = True
            else:
                last_space = False
            parts.append(c)
            offsets.append(pos)
        pos = end
    norm = "".join(parts)
    if norm.endswith(" "):
        norm = norm[:-1]
        offsets.pop()
    offsets.append(n)
    return norm, offsets


def normalize(text: str) -> str:
    """Return the normalised form of `text` (the first item of `normalize_with_map`).

    Complexity: O(len(text)).
    """
    return normalize_with_map(text)[0]


def _ignorable(c: str) -> bool:
    return c.isspace() or c in ZERO_WIDTH


def raw_span(text: str, offsets: list[int], start: int, end: int) -> tuple[int, int]:
    """Map the span `norm[start:end]` back to a span of the raw `text`.

    `offsets` is the map returned by `normalize_with_map(text)`; `0 <= start < end <=
    len(offsets) - 1`. The raw span starts at the unit that produced `norm[start]` and
    ends after the unit that produced `norm[end - 1]` (a unit that expanded into
    several normalised characters is included whole), with trailing whitespace and
    zero-width characters trimmed.

    Complexity: O(1) usually; O(k) when `end` falls inside a unit's k-character
    expansion, plus the trimmed whitespace.
    """
    raw_start = offsets[start]
    last = offsets[end - 1]
    k = end
    while k < len(offsets) - 1 and offsets[k] == last:
        k += 1
    raw_end = offsets[k]
    while raw_end > last + 1 and _ignorable(text[raw_end - 1]):
        raw_end -= 1
    return raw_start, raw_end


_ENTITY = re.compile(r"&(?:lt|gt|amp|quot|apos|#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6});")


def unescape_entities(text: str) -> str:
    """Unescape the HTML entities a model copies from escaped sources.

    Only `&lt;`, `&gt;`, `&amp;`, `&quot;`, `&apos;` and numeric references (`&#39;`,
    `&#x27;`) with their semicolon; anything else (`&copy`, "AT&T") is left as is.
    Complexity: O(len(text)).
    """
    if "&" not in text:
        return text
    return _ENTITY.sub(lambda m: html.unescape(m.group()), text)
