"""Refusal evidence and threshold calibration (pure functions)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quoteproof.model import Chunk, Hit
from quoteproof.retrieval.evidence import choose_threshold, term_coverage


def test_threshold_sits_in_the_middle_of_the_gap() -> None:
    calibration = choose_threshold("cosine:m", [0.6, 0.7, 0.8], [0.1, 0.2, 0.3])
    assert calibration.threshold == pytest.approx(0.45)
    assert (calibration.false_refusals, calibration.missed_refusals) == (0, 0)
    assert calibration.accuracy == 1.0
    assert (calibration.answerable, calibration.unanswerable) == (3, 3)


def test_overlapping_scores_minimise_errors() -> None:
    # answerable 0.5 sits below unanswerable 0.55: one error is unavoidable.
    calibration = choose_threshold("k", [0.5, 0.7, 0.9], [0.1, 0.3, 0.55])
    assert calibration.false_refusals + calibration.missed_refusals == 1
    assert calibration.accuracy == pytest.approx(5 / 6)


def test_calibration_needs_both_kinds() -> None:
    with pytest.raises(ValueError, match="answerable"):
        choose_threshold("k", [0.5], [])


@given(
    st.lists(st.floats(-5, 5), min_size=1, max_size=20),
    st.lists(st.floats(-5, 5), min_size=1, max_size=20),
)
def test_no_threshold_makes_fewer_errors(
    answerable: list[float], unanswerable: list[float]
) -> None:
    chosen = choose_threshold("k", answerable, unanswerable)
    for t in [*sorted(set(answerable + unanswerable)), 6.0]:
        errors = sum(a < t for a in answerable) + sum(u >= t for u in unanswerable)
        assert chosen.false_refusals + chosen.missed_refusals <= errors


def test_term_coverage_counts_question_words_in_the_top_hit() -> None:
    hit = Hit(Chunk("r", "d", 1, 1, 0, 1, "Shingles rashes hurt.", (), "Skin", "/d"), 1.0, 1)
    assert term_coverage("Does a shingles rash hurt?", [hit]) == 1.0
    assert term_coverage("shingles vaccine", [hit]) == 0.5
    assert term_coverage("skin", [hit]) == 1.0  # the label counts
    assert term_coverage("anything", []) == 0.0
