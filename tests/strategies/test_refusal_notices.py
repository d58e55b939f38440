"""What an answer says about the refusal check behind it."""

from __future__ import annotations

from quoteproof.model import RetrievalInfo
from quoteproof.strategies.session import refusal_notices


def test_a_missing_key_term_is_all_a_refusal_for_it_says() -> None:
    """A question whose name no source carries is refused for that name; a close
    call, above or below the threshold, would only suggest a rephrasing that cannot
    find it."""
    for evidence in (0.49, 0.51):
        info = RetrievalInfo("hybrid", evidence, "cosine:m", 0.5, "calibrated", ("paxlovid",))
        assert refusal_notices(info) == ["No retrieved source mentions 'paxlovid'."]


def test_a_close_call_says_so_with_figures_that_differ() -> None:
    info = RetrievalInfo("hybrid", 0.5312, "cosine:m", 0.5338, "calibrated")
    (notice,) = refusal_notices(info)
    assert notice.startswith("Close call: the best match (0.531) is just below")
    assert "(0.534)" in notice


def test_a_refusal_on_the_automatic_threshold_never_reads_as_equal_figures() -> None:
    """0.608 below 0.6139 once read "0.61 is below a threshold (0.61)"; the figures
    carry as many decimals as it takes to differ."""
    info = RetrievalInfo("hybrid", 0.608, "cosine:m", 0.6139, "automatic")
    (notice,) = refusal_notices(info)
    assert "best match (0.608) is below a threshold (0.614)" in notice
    close = RetrievalInfo("hybrid", 0.61391, "cosine:m", 0.61394, "calibrated")
    (notice,) = refusal_notices(close)
    assert "(0.61391) is just below the refusal threshold (0.61394)" in notice


def test_a_refusal_on_sentence_evidence_says_what_the_match_measures() -> None:
    """A newcomer read 0.537 for the answering passage in `quoteproof search` and
    0.413 as the refusal's best match: the refusal says that its match is another
    measure, and where the passages can be seen."""
    info = RetrievalInfo("hybrid", 0.413, "cosine+sentence:m", 0.453, "automatic")
    (notice,) = refusal_notices(info)
    assert "averages the question's similarity to the best passage and to the best" in notice
    plain = RetrievalInfo("hybrid", 0.413, "cosine:m", 0.453, "automatic")
    (notice,) = refusal_notices(plain)
    assert "averages" not in notice


def test_a_refusal_on_the_automatic_threshold_says_the_documents_may_still_answer() -> None:
    """A newcomer's answerable questions were refused on a threshold set from
    off-topic questions: the refusal says first that the documents may still answer
    (a newcomer found it buried in one long sentence), and what to do first (search,
    then calibrate)."""
    info = RetrievalInfo("hybrid", 0.594, "cosine:m", 0.651, "automatic")
    (notice,) = refusal_notices(info)
    assert notice.startswith("The documents may still answer this.")
    assert "off-topic questions, not from questions about these documents." in notice
    assert notice.index("`quoteproof search`") < notice.index("`quoteproof calibrate")
