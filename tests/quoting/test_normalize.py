"""Tests of quoting.normalize: the normalised text and its offset map."""

from __future__ import annotations

import itertools

from hypothesis import example, given, settings
from hypothesis import strategies as st

from quoteproof.quoting.normalize import (
    ZERO_WIDTH,
    normalize,
    normalize_with_map,
    raw_span,
    unescape_entities,
)

# Characters that exercise every rule: ASCII, whitespace of several kinds, accents in
# both composed and decomposed forms, ligatures, quotes, dashes, zero-width.
ALPHABET = (
    "abcXYZ019 .,;:!?()'\"`-"
    "\t\n\r\u00a0\u2003"
    "éÉßİﬁ½²Å\u0301"
    "‘’‚‛“”„‟′″«»´"
    "‐‑‒–—―−"
    "\u200b\u200c\u200d\ufeff\u00ad"
)
texts = st.text(alphabet=ALPHABET, max_size=80)


def test_examples() -> None:
    assert normalize("  Hello,\n\tWORLD  ") == "hello, world"
    assert normalize("“Quoted” ‘text’ «fr» „de“ `x´") == '"quoted" \'text\' "fr" "de" \'x\''
    assert normalize("a–b—c−d‐e") == "a-b-c-d-e"
    assert normalize("ef\u00adfec\u200btive\ufeff") == "effective"
    assert normalize("ﬁne Straße") == "fine strasse"
    assert normalize("cafe\u0301") == normalize("café") == "café"
    assert normalize("x\u00a0\u2003 y") == "x y"
    assert normalize("") == ""
    assert normalize(" \n\u200b ") == ""


def test_map_examples() -> None:
    norm, offsets = normalize_with_map("  A  ﬁ\u200bB ")
    assert norm == "a fib"
    assert offsets == [2, 3, 5, 5, 7, 9]


def test_unit_expansion_maps_to_its_start() -> None:
    text = "xﬁy"
    norm, offsets = normalize_with_map(text)
    assert norm == "xfiy"
    assert offsets == [0, 1, 1, 2, 3]
    # A span ending inside the expansion includes the whole ligature.
    assert raw_span(text, offsets, 0, 2) == (0, 2)


def test_raw_span_trims_dropped_characters() -> None:
    text = "ab\u200b  cd"
    norm, offsets = normalize_with_map(text)
    assert norm == "ab cd"
    assert raw_span(text, offsets, 0, 2) == (0, 2)
    assert raw_span(text, offsets, 3, 5) == (5, 7)
    assert raw_span(text, offsets, 0, 5) == (0, 7)


@settings(max_examples=300)
@given(texts)
@example("\u200b\u0301x\u00ad\u0301")
def test_map_shape(text: str) -> None:
    norm, offsets = normalize_with_map(text)
    assert norm == normalize(text)
    assert len(offsets) == len(norm) + 1
    assert offsets[-1] == len(text)
    assert all(a <= b for a, b in itertools.pairwise(offsets))
    assert not norm.startswith(" ") and not norm.endswith(" ") and "  " not in norm
    for i, c in enumerate(norm):
        source = text[offsets[i]]
        assert source not in ZERO_WIDTH
        assert c.isspace() == (c == " ")
        if c == " ":
            assert source.isspace()


@settings(max_examples=300)
@given(texts)
@example("a\u200b\u0301")
@example("x\u00ad\u0301y")
@example("İ ﬁ ½ ″")
def test_idempotent(text: str) -> None:
    assert normalize(normalize(text)) == normalize(text)


@settings(max_examples=300)
@given(st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=80))
def test_ascii_round_trip(text: str) -> None:
    """Printable ASCII maps to itself, lowercased, with spaces collapsed."""
    norm, offsets = normalize_with_map(text)
    assert norm == " ".join(text.split()).lower().replace("`", "'")
    for i, c in enumerate(norm):
        assert text[offsets[i]].lower().replace("`", "'") == c or (c == " " == text[offsets[i]])
    if " " not in text:
        assert offsets == list(range(len(text) + 1))


@settings(max_examples=200)
@given(texts, st.data())
def test_raw_span_renormalises_to_the_same_words(text: str, data: st.DataObject) -> None:
    """A span of whole normalised words maps to raw text that normalises back to it."""
    norm, offsets = normalize_with_map(text)
    words = norm.split(" ")
    if not norm:
        return
    i = data.draw(st.integers(0, len(words) - 1))
    j = data.draw(st.integers(i + 1, len(words)))
    start = len(" ".join(words[:i])) + (1 if i else 0)
    end = len(" ".join(words[:j]))
    if start >= end:
        return
    raw_start, raw_end = raw_span(text, offsets, start, end)
    assert normalize(text[raw_start:raw_end]) == norm[start:end]


def test_unescape_entities() -> None:
    assert unescape_entities("a &lt; b &amp;&amp; c &gt; d") == "a < b && c > d"
    assert unescape_entities("&quot;x&quot; &#39;y&#x27; &apos;") == "\"x\" 'y' '"
    assert unescape_entities("AT&T &copy &para;meter &amp") == "AT&T &copy &para;meter &amp"
