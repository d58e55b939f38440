"""Refusal evidence and threshold calibration (pure functions)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quoteproof.model import Chunk, Hit, RetrievalInfo
from quoteproof.retrieval.evidence import (
    BM25_COVERAGE,
    CALIBRATION_MARGIN,
    FALSE_REFUSAL_COST,
    choose_threshold,
    term_coverage,
    with_sentence_evidence,
)


def test_threshold_sits_in_the_middle_of_the_gap() -> None:
    # the gap runs from the highest unanswerable score to the lowest answerable one
    # less CALIBRATION_MARGIN
    calibration = choose_threshold("cosine:m", [0.6, 0.7, 0.8], [0.1, 0.2, 0.3])
    assert calibration.threshold == pytest.approx((0.3 + 0.6 - CALIBRATION_MARGIN) / 2)
    assert (calibration.false_refusals, calibration.missed_refusals) == (0, 0)
    assert calibration.accuracy == 1.0
    assert (calibration.answerable, calibration.unanswerable) == (3, 3)


def test_overlapping_scores_minimise_errors() -> None:
    # answerable 0.5 sits below unanswerable 0.55: one error is unavoidable.
    calibration = choose_threshold("k", [0.5, 0.7, 0.9], [0.1, 0.3, 0.55])
    assert calibration.false_refusals + calibration.missed_refusals == 1
    assert calibration.accuracy == pytest.approx(5 / 6)


def test_a_false_refusal_costs_more_than_a_missed_one() -> None:
    # look-alikes at 0.55 and 0.6 outscore the answerable 0.5: the threshold stays
    # below 0.5 (two missed refusals) rather than refuse it (one false refusal).
    calibration = choose_threshold("k", [0.5, 0.7, 0.9], [0.1, 0.55, 0.6])
    assert calibration.threshold == pytest.approx((0.1 + 0.5 - CALIBRATION_MARGIN) / 2)
    assert (calibration.false_refusals, calibration.missed_refusals) == (0, 2)
    # more than FALSE_REFUSAL_COST look-alikes above it outweigh one answerable question
    look_alikes = [0.51 + 0.01 * n for n in range(FALSE_REFUSAL_COST + 1)]
    calibration = choose_threshold("k", [0.5, 0.7, 0.9], [0.1, *look_alikes])
    assert (calibration.false_refusals, calibration.missed_refusals) == (1, 0)


def test_calibration_needs_both_kinds() -> None:
    with pytest.raises(ValueError, match="answerable"):
        choose_threshold("k", [0.5], [])


def test_the_threshold_keeps_a_margin_below_the_answerable_questions() -> None:
    # a look-alike scores just under the lowest answerable question: refusing it
    # would leave that question less than the margin above the threshold
    calibration = choose_threshold("k", [0.612, 0.7, 0.75], [0.2, 0.3, 0.563])
    assert calibration.threshold <= 0.612 - CALIBRATION_MARGIN
    assert (calibration.false_refusals, calibration.missed_refusals) == (0, 1)
    # with room for the margin, the look-alike is refused
    calibration = choose_threshold("k", [0.7, 0.75], [0.2, 0.3, 0.563])
    assert 0.563 < calibration.threshold <= 0.7 - CALIBRATION_MARGIN
    assert (calibration.false_refusals, calibration.missed_refusals) == (0, 0)


@given(
    st.lists(st.floats(-5, 5), min_size=1, max_size=20),
    st.lists(st.floats(-5, 5), min_size=1, max_size=20),
)
def test_no_threshold_costs_less(answerable: list[float], unanswerable: list[float]) -> None:
    # the cost counts an answerable question passed by less than the margin as refused
    def cost(threshold: float) -> int:
        refused = sum(a - CALIBRATION_MARGIN < threshold for a in answerable)
        return FALSE_REFUSAL_COST * refused + sum(u >= threshold for u in unanswerable)

    chosen = choose_threshold("k", answerable, unanswerable)
    kept_below = [a - CALIBRATION_MARGIN for a in answerable]
    for t in [*sorted(set(kept_below + unanswerable)), 6.0]:
        assert cost(chosen.threshold) <= cost(t)
    assert chosen.false_refusals == sum(a < chosen.threshold for a in answerable)


def test_term_coverage_counts_question_words_in_the_top_hit() -> None:
    hit = Hit(Chunk("r", "d", 1, 1, 0, 1, "Shingles rashes hurt.", (), "Skin", "/d"), 1.0, 1)
    assert term_coverage("Does a shingles rash hurt?", [hit]) == 1.0
    assert term_coverage("shingles vaccine", [hit]) == 0.5
    assert term_coverage("skin", [hit]) == 1.0  # the label counts
    assert term_coverage("anything", []) == 0.0


def test_sentence_evidence_is_the_mean_of_the_passage_and_the_best_unit() -> None:
    judged = with_sentence_evidence(RetrievalInfo("hybrid", 0.4, "cosine:m"), 0.8)
    assert judged.evidence == pytest.approx(0.6)
    assert judged.evidence_kind == "cosine+sentence:m"
    coverage = RetrievalInfo("bm25", 0.5, BM25_COVERAGE)
    assert with_sentence_evidence(coverage, 0.9) == coverage
    reranked = RetrievalInfo("hybrid", 0.5, "rerank:r")
    assert with_sentence_evidence(reranked, 0.9) == reranked


def test_at_equal_cost_the_threshold_refuses_fewer_answerable_questions() -> None:
    # refusing the answerable 0.5 (cost FALSE_REFUSAL_COST) costs as much as
    # answering the FALSE_REFUSAL_COST look-alikes above it: it is answered.
    look_alikes = [0.51 + 0.01 * n for n in range(FALSE_REFUSAL_COST)]
    calibration = choose_threshold("k", [0.5, 0.8, 0.9], [0.1, 0.2, *look_alikes])
    assert calibration.false_refusals == 0
    assert calibration.missed_refusals == FALSE_REFUSAL_COST
    assert 0.2 < calibration.threshold < 0.5
