"""Tests of quoting.align, with property tests against a slow, obvious oracle.

The oracle tries every span of the haystack that starts and ends at a word boundary
and scores it exactly as `find_span` reports scores: `fuzz.ratio` of the normalised
needle and the normalised span. The fast aligner must come close to the oracle's
best, and must find a span whenever the oracle's best is comfortably above the
threshold.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz

from quoteproof.quoting.align import Alignment, find_span, snap_to_words
from quoteproof.quoting.normalize import normalize

THRESHOLD = 90.0
TOLERANCE = 2.0  # points of fuzz.ratio the fast aligner may lose to the oracle

WORDS = (
    "the patient received a dose of drug daily for two weeks it was not effective in "
    "trial results were mixed blood pressure fell among adults with hypertension "
    "children under five should avoid this treatment unless advised by physician"
)
VOCAB = WORDS.split()
PUNCT = ["", "", "", ",", ".", ";", ":", ")", "'s"]
SEPARATORS = [" ", " ", " ", " ", "\n", "  "]


def is_word(c: str) -> bool:
    return c.isalnum() or c == "_"


def at_boundary(text: str, i: int) -> bool:
    return i <= 0 or i >= len(text) or not (is_word(text[i - 1]) and is_word(text[i]))


def reference_score(needle: str, span: str) -> float:
    """The documented fuzzy score: the better of ratio and token-sort ratio."""
    return max(fuzz.ratio(needle, span), fuzz.token_sort_ratio(needle, span))


def oracle(needle: str, haystack: str) -> tuple[float, int, int]:
    """Best (`fuzz.ratio`, start, end) over all word-boundary spans; O(n^2) ratios.

    The aligner's reported score (`reference_score`) is never below the ratio of its
    span, so it must come within the tolerance of this best ratio."""
    n = normalize(needle)
    starts = [p for p in range(len(haystack)) if not haystack[p].isspace()]
    starts = [p for p in starts if at_boundary(haystack, p)]
    ends = [p for p in range(1, len(haystack) + 1) if not haystack[p - 1].isspace()]
    ends = [p for p in ends if at_boundary(haystack, p)]
    best = (0.0, 0, 0)
    for s in starts:
        for e in ends:
            if e > s:
                score = fuzz.ratio(n, normalize(haystack[s:e]), score_cutoff=best[0])
                if score > best[0]:
                    best = (score, s, e)
    return best


@st.composite
def haystacks(draw: st.DrawFn, min_words: int = 8, max_words: int = 40) -> tuple[str, list[int]]:
    """A haystack of vocabulary words; also the start offset of each word."""
    words = draw(st.lists(st.sampled_from(VOCAB), min_size=min_words, max_size=max_words))
    parts: list[str] = []
    starts: list[int] = []
    pos = 0
    for k, word in enumerate(words):
        if k:
            sep = draw(st.sampled_from(SEPARATORS))
            parts.append(sep)
            pos += len(sep)
        if draw(st.integers(0, 9)) == 0:
            word = word.capitalize()
        token = word + draw(st.sampled_from(PUNCT))
        starts.append(pos)
        parts.append(token)
        pos += len(token)
    return "".join(parts), starts


def word_span(haystack: str, starts: list[int], i: int, j: int) -> tuple[int, int]:
    """The span from word i's start to the end of word j - 1 (trailing punctuation kept)."""
    end = starts[j] if j < len(starts) else len(haystack)
    while haystack[end - 1].isspace():
        end -= 1
    return starts[i], end


def assert_well_formed(found: Alignment, needle: str, haystack: str) -> None:
    text = haystack[found.start : found.end]
    assert text and text == text.strip()
    assert at_boundary(haystack, found.start) and at_boundary(haystack, found.end)
    if found.match == "exact":
        assert found.score == 100.0
    elif found.match == "normalized":
        assert found.score == 100.0
        assert normalize(text) == normalize(needle)
    else:
        assert found.score >= THRESHOLD
        assert found.score == pytest.approx(reference_score(normalize(needle), normalize(text)))


# -- exact and normalised matches ---------------------------------------------------


@settings(max_examples=150)
@given(haystacks(), st.data())
def test_exact_substring_found_at_its_offsets(
    hay: tuple[str, list[int]], data: st.DataObject
) -> None:
    haystack, starts = hay
    i = data.draw(st.integers(0, len(starts) - 1))
    j = data.draw(st.integers(i + 1, len(starts)))
    start, end = word_span(haystack, starts, i, j)
    needle = haystack[start:end]
    assume(sum(map(is_word, needle)) >= 3)
    found = find_span(needle, haystack)
    assert found is not None
    assert found.match == "exact"
    assert haystack[found.start : found.end] == needle
    assert found.start <= start
    assert_well_formed(found, needle, haystack)


def vary(text: str, data: st.DataObject) -> str:
    """Case, whitespace, quote-character and dash variants of `text`."""
    if data.draw(st.booleans()):
        text = text.upper()
    text = text.replace("'", data.draw(st.sampled_from(["'", "’", "‘", "′"])))
    text = text.replace("-", data.draw(st.sampled_from(["-", "–", "—", "−"])))
    text = text.replace('"', data.draw(st.sampled_from(['"', "“", "”", "«"])))
    spaces = data.draw(st.sampled_from([" ", "  ", "\n", " \t ", "\u00a0"]))
    return data.draw(st.sampled_from(["", " ", "\n"])) + spaces.join(text.split())


@settings(max_examples=150)
@given(haystacks(), st.data())
def test_normalized_variants_map_back_to_the_raw_span(
    hay: tuple[str, list[int]], data: st.DataObject
) -> None:
    haystack, starts = hay
    # Put typographic characters in the source; the needle uses other forms.
    haystack = haystack.replace("'s", "’s")
    starts = [s for s in starts]  # same offsets: the replacement keeps lengths
    i = data.draw(st.integers(0, len(starts) - 1))
    j = data.draw(st.integers(i + 1, len(starts)))
    start, end = word_span(haystack, starts, i, j)
    original = haystack[start:end]
    assume(sum(map(is_word, original)) >= 3)
    needle = vary(original, data)
    found = find_span(needle, haystack)
    assert found is not None
    assert found.match in ("exact", "normalized")
    assert normalize(haystack[found.start : found.end]) == normalize(original)
    if found.match == "normalized":
        assert found.start <= start
        if found.start == start:
            assert found.end == end
    assert_well_formed(found, needle, haystack)


def test_normalized_examples() -> None:
    haystack = "He said “don’t stop” — then left.\nThe dose was 2.5\u00a0mg."
    found = find_span('HE SAID "don\'t   stop" - then', haystack)
    assert found == Alignment(0, 27, "normalized", 100.0)
    assert haystack[found.start : found.end] == "He said “don’t stop” — then"
    found = find_span("left. the dose was 2.5 mg", haystack)
    assert found is not None and found.match == "normalized"
    assert haystack[found.start : found.end] == "left.\nThe dose was 2.5\u00a0mg"


def test_prefers_an_occurrence_at_word_boundaries() -> None:
    haystack = "concatenated strings; the cat sat"
    found = find_span("cat sat", haystack)
    assert found == Alignment(26, 33, "exact", 100.0)
    found = find_span("cat", "concatenate the cat")
    assert found == Alignment(16, 19, "exact", 100.0)


def test_exact_text_inside_a_word_is_snapped_or_rejected() -> None:
    haystack = "good morning to you all"
    found = find_span("ood morning to", haystack)
    assert found is not None and found.match == "fuzzy"
    assert haystack[found.start : found.end] == "good morning to"
    assert find_span("cat", "concatenate") is None


def test_html_entities_are_unescaped() -> None:
    haystack = 'if x < 5 & y > 2 then "stop" and don\'t'
    found = find_span("x &lt; 5 &amp; y &gt; 2 then &quot;stop&quot; and don&#39;t", haystack)
    assert found == Alignment(3, len(haystack), "exact", 100.0)
    escaped = "the value &lt; 5 is low"
    assert find_span("value &lt; 5 is", escaped) == Alignment(4, 19, "exact", 100.0)


def test_wrapping_quotes_are_ignored() -> None:
    haystack = "The drug was not effective in adults."
    found = find_span("“the drug was not effective”", haystack)
    assert found is not None and found.match == "normalized"
    assert haystack[found.start : found.end] == "The drug was not effective"
    # Quotes inside the needle are kept: the wrapping ones belong to the source here.
    source = 'He wrote "yes" and "no" twice.'
    found = find_span('"yes" and "no"', source)
    assert found == Alignment(9, 23, "exact", 100.0)


def test_too_short_or_empty_needles() -> None:
    haystack = "a b c de fg hij"
    assert find_span("", haystack) is None
    assert find_span("   ", haystack) is None
    assert find_span("de", haystack) is None
    assert find_span("a b", haystack) is None
    assert find_span("... …", haystack) is None
    assert find_span("hij", haystack) == Alignment(12, 15, "exact", 100.0)
    assert find_span("hij", "") is None


# -- fuzzy matches -------------------------------------------------------------------


def test_fuzzy_examples() -> None:
    haystack = (
        "In the trial, patients received 2.5 mg of the drug daily for two weeks. "
        "Blood pressure fell in most adults."
    )
    found = find_span("patients recieved 2.5 mg of drug daily for 2 weeks", haystack)
    assert found is not None and found.match == "fuzzy"
    assert haystack[found.start : found.end] == (
        "patients received 2.5 mg of the drug daily for two weeks"
    )
    assert_well_formed(found, "patients recieved 2.5 mg of drug daily for 2 weeks", haystack)


def test_near_miss_below_threshold_is_rejected() -> None:
    haystack = "Blood pressure fell in most adults with hypertension."
    needle = "blood sugar rose in few children with diabetes"
    assert fuzz.partial_ratio(normalize(needle), normalize(haystack)) < THRESHOLD
    assert find_span(needle, haystack) is None
    # A close paraphrase scoring between 80 and 90 is rejected at 90, accepted at 80.
    needle = "blood pressure dropped in many adults with hypertension"
    score, _, _ = oracle(needle, haystack)
    assert 80 <= score < THRESHOLD
    assert find_span(needle, haystack) is None
    loose = find_span(needle, haystack, threshold=80)
    assert loose is not None and loose.score == pytest.approx(score)


def test_absent_words_are_rejected() -> None:
    haystack = "The patient received a dose of the drug daily for two weeks."
    assert find_span("quantum chromodynamics predicts asymptotic freedom", haystack) is None
    assert find_span("zzz qqq xxx", haystack) is None


@st.composite
def mutated(draw: st.DrawFn, text: str, max_edits: int) -> str:
    chars = list(text)
    for _ in range(draw(st.integers(0, max_edits))):
        if not chars:
            break
        k = draw(st.integers(0, len(chars) - 1))
        op = draw(st.sampled_from(["delete", "insert", "replace", "drop-word"]))
        letter = draw(st.sampled_from("abcdefghijklmnopqrstuvwxyz "))
        if op == "delete":
            del chars[k]
        elif op == "insert":
            chars.insert(k, letter)
        elif op == "replace":
            chars[k] = letter
        else:
            rest = "".join(chars[k:])
            cut = rest.find(" ", 1)
            chars = chars[:k] + (list(rest[cut:]) if cut > 0 else [])
    return "".join(chars)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(haystacks(min_words=8, max_words=30), st.data())
def test_fuzzy_against_oracle(hay: tuple[str, list[int]], data: st.DataObject) -> None:
    haystack, starts = hay
    i = data.draw(st.integers(0, len(starts) - 1))
    j = data.draw(st.integers(i + 1, min(len(starts), i + 15)))
    start, end = word_span(haystack, starts, i, j)
    needle = data.draw(mutated(haystack[start:end], 4))
    assume(sum(map(is_word, normalize(needle))) >= 3)
    best, _, _ = oracle(needle, haystack)
    found = find_span(needle, haystack)
    if found is not None:
        assert_well_formed(found, needle, haystack)
        assert found.score >= best - TOLERANCE
    if best >= THRESHOLD + 5:
        assert found is not None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(haystacks(min_words=6, max_words=25), st.lists(st.sampled_from(VOCAB), min_size=3))
def test_random_needles_against_oracle(hay: tuple[str, list[int]], words: list[str]) -> None:
    """Needles of random vocabulary words: mostly rejections, never a bad acceptance."""
    haystack, _ = hay
    needle = " ".join(words[:12])
    best, _, _ = oracle(needle, haystack)
    found = find_span(needle, haystack)
    if found is not None:
        assert_well_formed(found, needle, haystack)
        assert found.score >= best - TOLERANCE
    if best >= THRESHOLD + 5:
        assert found is not None


# -- ellipses -----------------------------------------------------------------------


def test_ellipsis_joins_fragments_in_order() -> None:
    haystack = "The drug was tested in adults. It lowered blood pressure. Side effects were rare."
    found = find_span("The drug was tested ... side effects were rare", haystack)
    assert found == Alignment(0, len(haystack) - 1, "normalized", 100.0)
    found = find_span("drug was tested … lowered blood presure", haystack)
    assert found is not None and found.match == "fuzzy"
    assert (
        haystack[found.start : found.end] == "drug was tested in adults. It lowered blood pressure"
    )
    assert found.score == pytest.approx(
        fuzz.ratio("lowered blood presure", "lowered blood pressure")
    )
    # Fragments out of order do not resolve as fragments (nor fuzzily).
    assert find_span("side effects were rare ... the drug was tested", haystack) is None
    # A literal ellipsis in the source is matched as text first.
    source = "Wait... what happened next?"
    assert find_span("Wait... what happened", source) == Alignment(0, 21, "exact", 100.0)
    assert find_span("wait [...] what happened", source) is not None


# -- snap_to_words ------------------------------------------------------------------


def test_snap_examples() -> None:
    text = "  the quick, brown fox  "
    assert snap_to_words(text, 4, 9) == (2, 11)  # "e qui" -> "the quick"
    assert snap_to_words(text, 0, 24) == (2, 22)
    assert snap_to_words(text, 9, 12) == (6, 12)  # "ck," -> "quick,"
    assert snap_to_words(text, 11, 13) == (11, 12)  # ", " -> ","
    assert snap_to_words(text, 0, 2) == (2, 2)
    assert snap_to_words(text, -5, 100) == (2, 22)


@settings(max_examples=300)
@given(st.text(alphabet="ab c,\n.\u200b", max_size=30), st.integers(-2, 32), st.integers(-2, 32))
def test_snap_properties(text: str, start: int, end: int) -> None:
    s, e = snap_to_words(text, start, end)
    assert 0 <= s <= e <= len(text)
    lo, hi = max(0, min(start, len(text))), max(0, min(end, len(text)))
    if lo < hi:
        assert at_boundary(text, s) and at_boundary(text, e)
        if any(map(is_word, text[lo:hi])):
            assert s < e
            assert text[s] not in " \n\u200b" and text[e - 1] not in " \n\u200b"
            assert s <= lo or not is_word(text[lo])  # only widened over word characters
            assert text[lo:hi].strip(" \n\u200b") in text[s:e]
